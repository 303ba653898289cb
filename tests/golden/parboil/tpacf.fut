-- The Futhark program pmexpr generates for the Parboil `tpacf` port
-- (src/parboil/tpacf.rs), cut out of the crate's program with what it uses.
-- `main` takes the original's inputs, so that `futhark bench` runs it on the
-- original's data: see BENCHMARKS.md. Checked by tests/parboil_futhark.rs.

-- `ys` with the size of `xs` (map2 needs equal sizes).
def pm_same_size [n] 'a 'b (_: [n]a) (ys: []b) : [n]b = ys :> [n]b

-- `x` with the size of the rows of `xss`.
def pm_row_size [n] [m] 't (_: [n][m]t) (x: []t) : [m]t = x :> [m]t

def dec2rad_1 (pi_2: f64) (dec_3: f64) =
  (pi_2 / 180.0f64) * dec_3

def log10_4 (x_5: f64) =
  (f64.log x_5) / (f64.log 10.0f64)

def lambda71_6 (pi_7: f64) (k_8: i64) =
  f64.cos (((10.0f64 ** ((log10_4 1.0f64) + (((f64.i64 k_8) * 1.0f64) / 5.0f64))) / 60.0f64) * (dec2rad_1 pi_7 1.0f64))

def fix_points_9 (pi_10: f64) (ra_11: f64) (dec_12: f64) =
  let rarad_13 = dec2rad_1 pi_10 ra_11
  let decrad_14 = dec2rad_1 pi_10 dec_12
  let cd_15 = f64.cos decrad_14
  in ((f64.cos rarad_13) * cd_15, (f64.sin rarad_13) * cd_15, f64.sin decrad_14)

def step_16 (binb_17: []f64) (dot_18: f64) (mm_19: (i64, i64)) =
  if ((mm_19.0) + 1i64) < (mm_19.1)
  then (let k_20 = ((mm_19.0) + (mm_19.1)) // 2i64
        in if dot_18 >= (binb_17[k_20]) then (mm_19.0, k_20) else (k_20, mm_19.1))
  else mm_19

def bin_of_21 (binb_22: []f64) (dot_23: f64) =
  let (lo_24, hi_25) = step_16 binb_22 dot_23 (step_16 binb_22 dot_23 (step_16 binb_22 dot_23 (step_16 binb_22 dot_23 (step_16 binb_22 dot_23 (0i64, 20i64)))))
  in if dot_23 >= (binb_22[lo_24])
     then lo_24
     else if dot_23 < (binb_22[hi_25]) then hi_25 + 1i64 else hi_25

def lambda77_26 (binb_27: []f64) (dps_28: [](f64, f64, f64)) (rnd_29: [](f64, f64, f64)) (nd_30: i64) (k_31: i64) =
  let p_32 = dps_28[k_31 // nd_30]
  let q_33 = rnd_29[k_31 %% nd_30]
  in bin_of_21 binb_27 ((((p_32.0) * (q_33.0)) + ((p_32.1) * (q_33.1))) + ((p_32.2) * (q_33.2)))

def lambda82_34_i32 (one_35: i32) (_: i64) =
  one_35

def do_compute_36_i32 (binb_37: []f64) (one_38: i32) (dps_39: [](f64, f64, f64)) (rnd_40: [](f64, f64, f64)) =
  let nd_41 = length dps_39
  let l_42 = nd_41 * nd_41
  let pm_is1 = tabulate l_42 (lambda77_26 binb_37 dps_39 rnd_40 nd_41)
  in hist (+) 0i32 22i64 pm_is1 (pm_same_size pm_is1 (replicate l_42 (lambda82_34_i32 one_38 0i64)))

def lambda86_43 (binb_44: []f64) (dps_45: [](f64, f64, f64)) (nd_46: i64) (k_47: i64) =
  let i_48 = k_47 // nd_46
  let j_49 = k_47 %% nd_46
  in if j_49 > i_48
     then (-1i64)
     else let p_50 = dps_45[i_48]
          let q_51 = dps_45[j_49]
          in bin_of_21 binb_44 ((((p_50.0) * (q_51.0)) + ((p_50.1) * (q_51.1))) + ((p_50.2) * (q_51.2)))

def lambda90_52_i32 (one_53: i32) (_: i64) =
  one_53

def do_compute_self_54_i32 (binb_55: []f64) (one_56: i32) (dps_57: [](f64, f64, f64)) =
  let nd_58 = length dps_57
  let l_59 = nd_58 * nd_58
  let pm_is1 = tabulate l_59 (lambda86_43 binb_55 dps_57 nd_58)
  in hist (+) 0i32 22i64 pm_is1 (pm_same_size pm_is1 (replicate l_59 (lambda90_52_i32 one_56 0i64)))

def lambda94_60_i32 (a_61: []i32) (b_62: []i32) =
  map2 (+) a_61 (pm_same_size a_61 b_62)

def lambda95_63_i32 (_: i64) =
  0i32

def sum_bins_64_i32 (h_65: [][]i32) =
  reduce lambda94_60_i32 (pm_row_size h_65 (replicate 22i64 (lambda95_63_i32 0i64))) h_65

def lambda96_66 (pi_67: f64) (xs_68: []f64) (ys_69: []f64) =
  map2 (fix_points_9 pi_67) xs_68 (pm_same_size xs_68 ys_69)

def lambda98_70_i32 (binb_71: []f64) (one_72: i32) (datapoints_73: [](f64, f64, f64)) (r_74: [](f64, f64, f64)) =
  do_compute_36_i32 binb_71 one_72 datapoints_73 r_74

def lambda102_75_i32 (binb_76: []f64) (one_77: i32) (r_78: [](f64, f64, f64)) =
  do_compute_self_54_i32 binb_76 one_77 r_78

def lambda105_79_i32 (dd_80: []i32) (dr_81: []i32) (rr_82: []i32) (b_83: i64) =
  [dd_80[b_83], dr_81[b_83], rr_82[b_83]]

def lambda109_84 (b_85: i64) =
  b_85 + 1i64

def tpacf_pmexpr (one_86: i32) (datapoints_x_87: []f64) (datapoints_y_88: []f64) (random_x_89: [][]f64) (random_y_90: [][]f64) : []i32 =
  let pi_91 = 3.141592653589793f64
  let binb_92 = map (lambda71_6 pi_91) (iota 21i64)
  let datapoints_93 = map2 (fix_points_9 pi_91) datapoints_x_87 (pm_same_size datapoints_x_87 datapoints_y_88)
  let randompoints_94 = map2 (lambda96_66 pi_91) random_x_89 (pm_same_size random_x_89 random_y_90)
  let drs_95 = map (lambda98_70_i32 binb_92 one_86 datapoints_93) randompoints_94
  let rrs_96 = map (lambda102_75_i32 binb_92 one_86) randompoints_94
  let dd_97 = do_compute_self_54_i32 binb_92 one_86 datapoints_93
  let dr_98 = sum_bins_64_i32 drs_95
  let rr_99 = sum_bins_64_i32 rrs_96
  in flatten (map (lambda105_79_i32 dd_97 dr_98 rr_99) (tabulate 20i64 lambda109_84))

entry main [numD][numRs] (datapointsx: [numD]f64) (datapointsy: [numD]f64) (randompointsx: [numRs][numD]f64) (randompointsy: [numRs][numD]f64) : []i32 =
  tpacf_pmexpr 1 datapointsx datapointsy randompointsx randompointsy
