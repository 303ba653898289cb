-- The Futhark program pmexpr generates for the Parboil `tpacf` port
-- (src/parboil/tpacf.rs), cut out of the crate's program with what it uses.
-- `main` takes the original's inputs, so that `futhark bench` runs it on the
-- original's data: see BENCHMARKS.md. Checked by tests/parboil_futhark.rs.

-- `ys` with the size of `xs` (map2 needs equal sizes).
def pm_same_size [n] 'a 'b (_: [n]a) (ys: []b) : [n]b = ys :> [n]b

-- `x` with the size of the rows of `xss`.
def pm_row_size [n] [m] 't (_: [n][m]t) (x: []t) : [m]t = x :> [m]t

-- `f` with results of the size of the rows of `xss` (a reduction's operator).
def pm_row_op [n] [m] 't (_: [n][m]t) (f: []t -> []t -> []t) : [m]t -> [m]t -> [m]t = \a b -> f a b :> [m]t

def dec2rad_1 (pi_2: f64) (dec_3: f64) =
  (pi_2 / 180.0f64) * dec_3

def log10_4 (x_5: f64) =
  (f64.log x_5) / (f64.log 10.0f64)

def lambda72_6 (pi_7: f64) (k_8: i64) =
  f64.cos (((10.0f64 ** ((log10_4 1.0f64) + (((f64.i64 k_8) * 1.0f64) / 5.0f64))) / 60.0f64) * (dec2rad_1 pi_7 1.0f64))

def fix_points_9 (pi_10: f64) (ra_11: f64) (dec_12: f64) =
  let rarad_13 = dec2rad_1 pi_10 ra_11
  let decrad_14 = dec2rad_1 pi_10 dec_12
  let cd_15 = f64.cos decrad_14
  in ((f64.cos rarad_13) * cd_15, (f64.sin rarad_13) * cd_15, f64.sin decrad_14)

def search_16 (binb_17: []f64) (dot_18: f64) (lo_19: i64) (hi_20: i64) =
  let (_, _, _, pm_r2) =
    loop (pm_go1, lo_19, hi_20, pm_r2) = (true, lo_19, hi_20, (0i64, 0i64)) while pm_go1 do
      if (lo_19 + 1i64) < hi_20
      then (let k_21 = (lo_19 + hi_20) // 2i64
            in if !(f64.isnan dot_18) && dot_18 >= (binb_17[k_21])
               then (true, lo_19, k_21, pm_r2)
               else (true, k_21, hi_20, pm_r2))
      else (false, lo_19, hi_20, (lo_19, hi_20))
  in pm_r2

def bin_of_22 (binb_23: []f64) (dot_24: f64) =
  let (lo_25, hi_26) = search_16 binb_23 dot_24 0i64 20i64
  in if !(f64.isnan dot_24) && dot_24 >= (binb_23[lo_25])
     then lo_25
     else if dot_24 < (binb_23[hi_26]) then hi_26 + 1i64 else hi_26

def lambda78_27 (binb_28: []f64) (dps_29: [](f64, f64, f64)) (rnd_30: [](f64, f64, f64)) (nd_31: i64) (k_32: i64) =
  let p_33 = dps_29[assert (!(nd_31 == -1i64 && k_32 == i64.lowest)) (k_32 // nd_31)]
  let q_34 = rnd_30[assert (!(nd_31 == -1i64 && k_32 == i64.lowest)) (k_32 %% nd_31)]
  in bin_of_22 binb_28 ((((p_33.0) * (q_34.0)) + ((p_33.1) * (q_34.1))) + ((p_33.2) * (q_34.2)))

def lambda83_35_i32 (one_36: i32) (_: i64) =
  one_36

def do_compute_37_i32 (binb_38: []f64) (one_39: i32) (dps_40: [](f64, f64, f64)) (rnd_41: [](f64, f64, f64)) =
  let nd_42 = length dps_40
  let l_43 = nd_42 * nd_42
  let pm_is1 = tabulate (i64.max 0i64 l_43) (lambda78_27 binb_38 dps_40 rnd_41 nd_42)
  in hist (+) 0i32 22i64 pm_is1 (pm_same_size pm_is1 (replicate (i64.max 0i64 l_43) (lambda83_35_i32 one_39 0i64)))

def lambda87_44 (binb_45: []f64) (dps_46: [](f64, f64, f64)) (nd_47: i64) (k_48: i64) =
  let i_49 = assert (!(nd_47 == -1i64 && k_48 == i64.lowest)) (k_48 // nd_47)
  let j_50 = assert (!(nd_47 == -1i64 && k_48 == i64.lowest)) (k_48 %% nd_47)
  in if j_50 > i_49
     then (-1i64)
     else let p_51 = dps_46[i_49]
          let q_52 = dps_46[j_50]
          in bin_of_22 binb_45 ((((p_51.0) * (q_52.0)) + ((p_51.1) * (q_52.1))) + ((p_51.2) * (q_52.2)))

def lambda91_53_i32 (one_54: i32) (_: i64) =
  one_54

def do_compute_self_55_i32 (binb_56: []f64) (one_57: i32) (dps_58: [](f64, f64, f64)) =
  let nd_59 = length dps_58
  let l_60 = nd_59 * nd_59
  let pm_is1 = tabulate (i64.max 0i64 l_60) (lambda87_44 binb_56 dps_58 nd_59)
  in hist (+) 0i32 22i64 pm_is1 (pm_same_size pm_is1 (replicate (i64.max 0i64 l_60) (lambda91_53_i32 one_57 0i64)))

def lambda95_61_i32 (a_62: []i32) (b_63: []i32) =
  map2 (+) a_62 (pm_same_size a_62 b_63)

def lambda96_64_i32 (_: i64) =
  0i32

def sum_bins_65_i32 (h_66: [][]i32) =
  reduce (pm_row_op h_66 lambda95_61_i32) (pm_row_size h_66 (replicate 22i64 (lambda96_64_i32 0i64))) h_66

def lambda97_67 (pi_68: f64) (xs_69: []f64) (ys_70: []f64) =
  map2 (fix_points_9 pi_68) xs_69 (pm_same_size xs_69 ys_70)

def lambda99_71_i32 (binb_72: []f64) (one_73: i32) (datapoints_74: [](f64, f64, f64)) (r_75: [](f64, f64, f64)) =
  do_compute_37_i32 binb_72 one_73 datapoints_74 r_75

def lambda103_76_i32 (binb_77: []f64) (one_78: i32) (r_79: [](f64, f64, f64)) =
  do_compute_self_55_i32 binb_77 one_78 r_79

def lambda106_80_i32 (dd_81: []i32) (dr_82: []i32) (rr_83: []i32) (b_84: i64) =
  [dd_81[b_84], dr_82[b_84], rr_83[b_84]]

def lambda110_85 (b_86: i64) =
  b_86 + 1i64

def tpacf_pmexpr (one_87: i32) (datapoints_x_88: []f64) (datapoints_y_89: []f64) (random_x_90: [][]f64) (random_y_91: [][]f64) : []i32 =
  let pi_92 = 3.141592653589793f64
  let binb_93 = map (lambda72_6 pi_92) (iota 21i64)
  let datapoints_94 = map2 (fix_points_9 pi_92) datapoints_x_88 (pm_same_size datapoints_x_88 datapoints_y_89)
  let randompoints_95 = map2 (lambda97_67 pi_92) random_x_90 (pm_same_size random_x_90 random_y_91)
  let drs_96 = map (lambda99_71_i32 binb_93 one_87 datapoints_94) randompoints_95
  let rrs_97 = map (lambda103_76_i32 binb_93 one_87) randompoints_95
  let dd_98 = do_compute_self_55_i32 binb_93 one_87 datapoints_94
  let dr_99 = sum_bins_65_i32 drs_96
  let rr_100 = sum_bins_65_i32 rrs_97
  in flatten (map (lambda106_80_i32 dd_98 dr_99 rr_100) (tabulate 20i64 lambda110_85))

entry main [numD][numRs] (datapointsx: [numD]f64) (datapointsy: [numD]f64) (randompointsx: [numRs][numD]f64) (randompointsy: [numRs][numD]f64) : []i32 =
  tpacf_pmexpr 1 datapointsx datapointsy randompointsx randompointsy
