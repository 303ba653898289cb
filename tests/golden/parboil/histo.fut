-- The Futhark program pmexpr generates for the Parboil `histo` port
-- (src/parboil/histo.rs), cut out of the crate's program with what it uses.
-- `main` takes the original's inputs, so that `futhark bench` runs it on the
-- original's data: see BENCHMARKS.md. Checked by tests/parboil_futhark.rs.

-- `ys` with the size of `xs` (map2 needs equal sizes).
def pm_same_size [n] 'a 'b (_: [n]a) (ys: []b) : [n]b = ys :> [n]b

def lambda8_1_i32 (highest_2: i32) (x_3: i32) (y_4: i32) =
  if (x_3 + y_4) > highest_2 then highest_2 else x_3 + y_4

def lambda10_5_i32_i32 (_: i32) =
  1i32

def histo_pmexpr (img_6: [][]i32) (highest_7: i32) (histo_height_8: i64) (histo_width_9: i64) : []i32 =
  let pixels_10 = flatten img_6
  let pm_is1 = map i64.i32 pixels_10
  in hist (lambda8_1_i32 highest_7) 0i32 (i64.max 0i64 (histo_height_8 * histo_width_9)) pm_is1 (pm_same_size pm_is1 (map lambda10_5_i32_i32 pixels_10))

entry main [img_width][img_height] (histo_width: i32) (histo_height: i32) (img: [img_width][img_height]i32) : []i32 =
  histo_pmexpr img (i32.u8 u8.highest) (i64.i32 histo_height) (i64.i32 histo_width)
