-- The Futhark program pmexpr generates for the Parboil `stencil` port
-- (src/parboil/stencil.rs), cut out of the crate's program with what it uses.
-- `main` takes the original's inputs, so that `futhark bench` runs it on the
-- original's data: see BENCHMARKS.md. Checked by tests/parboil_futhark.rs.

def lambda34_1_f32_i64 (a0_slice_2: [][]f32) (_: i64) =
  a0_slice_2

def lambda39_3_f32 (c0_4: f32) (c1_5: f32) (nz_6: i64) (r_7: []f32) (left_8: []f32) (right_9: []f32) (rb_10: []f32) (ra_11: []f32) (edge_row_12: bool) (k_13: i64) =
  if (if (if edge_row_12 then true else k_13 == 0i64)
      then true
      else k_13 == (nz_6 - 1i64))
  then r_7[k_13]
  else (((((((r_7[k_13 + 1i64]) + (r_7[k_13 - 1i64])) + (left_8[k_13])) + (right_9[k_13])) + (rb_10[k_13])) + (ra_11[k_13])) * c1_5) + ((r_7[k_13]) * c0_4)

def lambda38_14_f32_i64 (c0_15: f32) (c1_16: f32) (ny_17: i64) (nz_18: i64) (nx_19: i64) (ks_20: []i64) (i_21: i64) (ai_22: [][]f32) (below_23: [][]f32) (above_24: [][]f32) (j_25: i64) =
  let r_26 = ai_22[j_25]
  let left_27 = ai_22[(if j_25 == 0i64 then j_25 else j_25 - 1i64)]
  let right_28 = ai_22[(if j_25 == (ny_17 - 1i64) then j_25 else j_25 + 1i64)]
  let (rb_29, ra_30) = (below_23[j_25], above_24[j_25])
  let edge_row_31 =
    if (if (if i_21 == 0i64 then true else i_21 == (nx_19 - 1i64))
        then true
        else j_25 == 0i64)
    then true
    else j_25 == (ny_17 - 1i64)
  in map (lambda39_3_f32 c0_15 c1_16 nz_18 r_26 left_27 right_28 rb_29 ra_30 edge_row_31) ks_20

def lambda37_32_f32_i64 (c0_33: f32) (c1_34: f32) (ny_35: i64) (nz_36: i64) (nx_37: i64) (js_38: []i64) (ks_39: []i64) (a_40: [][][]f32) (i_41: i64) =
  let ai_42 = a_40[i_41]
  let below_43 = a_40[(if i_41 == 0i64 then i_41 else i_41 - 1i64)]
  let above_44 = a_40[(if i_41 == (nx_37 - 1i64) then i_41 else i_41 + 1i64)]
  in map (lambda38_14_f32_i64 c0_33 c1_34 ny_35 nz_36 nx_37 ks_39 i_41 ai_42 below_43 above_44) js_38

def lambda36_45_f32_i64_i64 (c0_46: f32) (c1_47: f32) (ny_48: i64) (nz_49: i64) (nx_50: i64) (is_51: []i64) (js_52: []i64) (ks_53: []i64) (a_54: [][][]f32) (_: i64) =
  map (lambda37_32_f32_i64 c0_46 c1_47 ny_48 nz_49 nx_50 js_52 ks_53 a_54) is_51

def stencil_pmexpr (a0_slice_55: [][]f32) (nx_56: i64) (iterations_57: i64) : [][]f32 =
  let c0_58 = 1.0f32 / 6.0f32
  let c1_59 = (1.0f32 / 6.0f32) / 6.0f32
  let ny_60 = length a0_slice_55
  let nz_61 = length (head a0_slice_55)
  let is_62 = iota (i64.max 0i64 nx_56)
  let js_63 = iota (i64.max 0i64 ny_60)
  let ks_64 = iota (i64.max 0i64 nz_61)
  let a0_65 = replicate (i64.max 0i64 nx_56) (lambda34_1_f32_i64 a0_slice_55 0i64)
  let a_66 = loop pm_acc1 = a0_65 for pm_x2 in (iota (i64.max 0i64 iterations_57)) do lambda36_45_f32_i64_i64 c0_58 c1_59 ny_60 nz_61 nx_56 is_62 js_63 ks_64 pm_acc1 pm_x2
  in head a_66

entry main [ny][nz] (iterations: i32) (nx: i32) (A0_slice: [ny][nz]f32) : [][]f32 =
  stencil_pmexpr A0_slice (i64.i32 nx) (i64.i32 iterations)
