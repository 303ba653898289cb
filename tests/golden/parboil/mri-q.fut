-- The Futhark program pmexpr generates for the Parboil `mri-q` port
-- (src/parboil/mriq.rs), cut out of the crate's program with what it uses.
-- `main` takes the original's inputs, so that `futhark bench` runs it on the
-- original's data: see BENCHMARKS.md. Checked by tests/parboil_futhark.rs.

-- `ys` with the size of `xs` (map2 needs equal sizes).
def pm_same_size [n] 'a 'b (_: [n]a) (ys: []b) : [n]b = ys :> [n]b

def lambda32_1_f32 (r_2: f32) (i_3: f32) =
  (r_2 * r_2) + (i_3 * i_3)

def lambda33_4_f32 (a_5: f32) (b_6: f32) =
  (a_5, b_6)

def lambda34_7_f32 (c_8: f32) (m_9: f32) =
  (c_8, m_9)

def lambda35_10_f32 (ab_11: (f32, f32)) (cm_12: (f32, f32)) =
  (ab_11.0, ab_11.1, cm_12.0, cm_12.1)

def lambda36_13_f32 (a_14: f32) (b_15: f32) =
  (a_14, b_15)

def lambda38_16_f32 (s_17: (f32, f32)) (t_18: (f32, f32)) =
  ((s_17.0) + (t_18.0), (s_17.1) + (t_18.1))

def lambda39_19_f32 (p_20: (f32, f32)) (ze_21: f32) (k_22: (f32, f32, f32, f32)) =
  let e_23 = (2.0f32 * 3.1415927f32) * ((((k_22.0) * (p_20.0)) + ((k_22.1) * (p_20.1))) + ((k_22.2) * ze_21))
  in ((k_22.3) * (f32.cos e_23), (k_22.3) * (f32.sin e_23))

def lambda37_24_f32 (ks_25: [](f32, f32, f32, f32)) (p_26: (f32, f32)) (ze_27: f32) =
  reduce lambda38_16_f32 (0.0f32, 0.0f32) (map (lambda39_19_f32 p_26 ze_27) ks_25)

def lambda43_28_f32 (r_29: (f32, f32)) =
  r_29.0

def lambda44_30_f32 (r_31: (f32, f32)) =
  r_31.1

def mri_q_pmexpr (phi_r_32: []f32) (phi_i_33: []f32) (kx_34: []f32) (ky_35: []f32) (kz_36: []f32) (x_37: []f32) (y_38: []f32) (z_39: []f32) : ([]f32, []f32) =
  let (pm_result_40, pm_result_41) =
    let phi_mag_42 = map2 lambda32_1_f32 phi_r_32 (pm_same_size phi_r_32 phi_i_33)
    let kxy_43 = map2 lambda33_4_f32 kx_34 (pm_same_size kx_34 ky_35)
    let kzm_44 = map2 lambda34_7_f32 kz_36 (pm_same_size kz_36 phi_mag_42)
    let ks_45 = map2 lambda35_10_f32 kxy_43 (pm_same_size kxy_43 kzm_44)
    let xy_46 = map2 lambda36_13_f32 x_37 (pm_same_size x_37 y_38)
    let q_47 = map2 (lambda37_24_f32 ks_45) xy_46 (pm_same_size xy_46 z_39)
    in (map lambda43_28_f32 q_47, map lambda44_30_f32 q_47)
  in (pm_result_40, pm_result_41)

entry main [numK][numX] (kx: [numK]f32) (ky: [numK]f32) (kz: [numK]f32) (x: [numX]f32) (y: [numX]f32) (z: [numX]f32) (phiR: [numK]f32) (phiI: [numK]f32) : ([]f32, []f32) =
  mri_q_pmexpr phiR phiI kx ky kz x y z
