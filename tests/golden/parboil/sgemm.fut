-- The Futhark program pmexpr generates for the Parboil `sgemm` port
-- (src/parboil/sgemm.rs), cut out of the crate's program with what it uses.
-- `main` takes the original's inputs, so that `futhark bench` runs it on the
-- original's data: see BENCHMARKS.md. Checked by tests/parboil_futhark.rs.

-- `ys` with the size of `xs` (map2 needs equal sizes).
def pm_same_size [n] 'a 'b (_: [n]a) (ys: []b) : [n]b = ys :> [n]b

def lambda19_1_f32 (j_2: i64) (row_3: []f32) =
  row_3[j_2]

def lambda18_4_f32 (b_5: [][]f32) (j_6: i64) =
  map (lambda19_1_f32 j_6) b_5

def lambda24_7_f32 (arow_8: []f32) (beta_9: f32) (alpha_10: f32) (bcol_11: []f32) (cij_12: f32) =
  (cij_12 * beta_9) + ((reduce (+) 0.0f32 (map2 (*) arow_8 (pm_same_size arow_8 bcol_11))) * alpha_10)

def lambda23_13_f32 (bt_14: [][]f32) (beta_15: f32) (alpha_16: f32) (arow_17: []f32) (crow_18: []f32) =
  map2 (lambda24_7_f32 arow_17 beta_15 alpha_16) bt_14 (pm_same_size bt_14 crow_18)

def sgemm_pmexpr (b_19: [][]f32) (beta_20: f32) (alpha_21: f32) (a_22: [][]f32) (c_23: [][]f32) : [][]f32 =
  let p_24 = length (head b_19)
  let bt_25 = map (lambda18_4_f32 b_19) (iota (i64.max 0i64 p_24))
  in map2 (lambda23_13_f32 bt_25 beta_20 alpha_21) a_22 (pm_same_size a_22 c_23)

entry main [n][m][p] (ass: [n][m]f32) (bss: [m][p]f32) (css: [n][p]f32) (alpha: f32) (beta: f32) : [][]f32 =
  sgemm_pmexpr bss beta alpha ass css
