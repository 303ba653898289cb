-- The Futhark program pmexpr generates for the Parboil `mri-q` port
-- (src/parboil/mriq.rs), cut out of the crate's program with what it uses.
-- `main` takes the original's inputs, so that `futhark bench` runs it on the
-- original's data: see BENCHMARKS.md. Checked by tests/parboil_futhark.rs.

-- `ys` with the size of `xs` (map2 needs equal sizes).
def pm_same_size [n] 'a 'b (_: [n]a) (ys: []b) : [n]b = ys :> [n]b

def lambda32_1 (r_2: f64) (i_3: f64) =
  (r_2 * r_2) + (i_3 * i_3)

def lambda33_4 (a_5: f64) (b_6: f64) =
  (a_5, b_6)

def lambda34_7 (c_8: f64) (m_9: f64) =
  (c_8, m_9)

def lambda35_10 (ab_11: (f64, f64)) (cm_12: (f64, f64)) =
  (ab_11.0, ab_11.1, cm_12.0, cm_12.1)

def lambda36_13 (a_14: f64) (b_15: f64) =
  (a_14, b_15)

def lambda38_16 (s_17: (f64, f64)) (t_18: (f64, f64)) =
  ((s_17.0) + (t_18.0), (s_17.1) + (t_18.1))

def lambda39_19 (p_20: (f64, f64)) (ze_21: f64) (k_22: (f64, f64, f64, f64)) =
  let e_23 = (2.0f64 * 3.141592653589793f64) * ((((k_22.0) * (p_20.0)) + ((k_22.1) * (p_20.1))) + ((k_22.2) * ze_21))
  in ((k_22.3) * (f64.cos e_23), (k_22.3) * (f64.sin e_23))

def lambda37_24 (ks_25: [](f64, f64, f64, f64)) (p_26: (f64, f64)) (ze_27: f64) =
  reduce lambda38_16 (0.0f64, 0.0f64) (map (lambda39_19 p_26 ze_27) ks_25)

def lambda43_28 (r_29: (f64, f64)) =
  r_29.0

def lambda44_30 (r_31: (f64, f64)) =
  r_31.1

def mri_q_pmexpr (phi_r_32: []f64) (phi_i_33: []f64) (kx_34: []f64) (ky_35: []f64) (kz_36: []f64) (x_37: []f64) (y_38: []f64) (z_39: []f64) : ([]f64, []f64) =
  let pm_result =
    let phi_mag_40 = map2 lambda32_1 phi_r_32 (pm_same_size phi_r_32 phi_i_33)
    let kxy_41 = map2 lambda33_4 kx_34 (pm_same_size kx_34 ky_35)
    let kzm_42 = map2 lambda34_7 kz_36 (pm_same_size kz_36 phi_mag_40)
    let ks_43 = map2 lambda35_10 kxy_41 (pm_same_size kxy_41 kzm_42)
    let xy_44 = map2 lambda36_13 x_37 (pm_same_size x_37 y_38)
    let q_45 = map2 (lambda37_24 ks_43) xy_44 (pm_same_size xy_44 z_39)
    in (map lambda43_28 q_45, map lambda44_30 q_45)
  in (pm_result.0, pm_result.1)

entry main [numK][numX] (kx: [numK]f32) (ky: [numK]f32) (kz: [numK]f32) (x: [numX]f32) (y: [numX]f32) (z: [numX]f32) (phiR: [numK]f32) (phiI: [numK]f32) : ([]f32, []f32) =
  let f = map f64.f32
  let (qr, qi) = mri_q_pmexpr (f phiR) (f phiI) (f kx) (f ky) (f kz) (f x) (f y) (f z)
  in (map f32.f64 qr, map f32.f64 qi)
