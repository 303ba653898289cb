//! The JSON manifest that `futhark <backend> --library` writes beside the C it generates: the
//! entry points and the C names of every type and function (Futhark 0.25,
//! `docs/manifest.schema.json` of the Futhark repository). Only what the bindings need is read;
//! unknown keys are ignored, so newer compilers' manifests still parse.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A compiled Futhark program's C API.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Manifest {
    /// The backend it was compiled with: `c`, `multicore`, `cuda`, …
    pub backend: String,
    /// The compiler version (absent before Futhark 0.22).
    #[serde(default)]
    pub version: Option<String>,
    /// The entry points by Futhark name.
    pub entry_points: BTreeMap<String, EntryPoint>,
    /// The array and opaque types by Futhark name (`[]f64`, a record's name, …).
    pub types: BTreeMap<String, TypeInfo>,
}

/// One entry point.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct EntryPoint {
    /// The C function.
    pub cfun: String,
    /// Its parameters.
    pub inputs: Vec<Input>,
    /// Its results.
    pub outputs: Vec<Output>,
}

/// A parameter of an entry point.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Input {
    /// Its name in the Futhark source.
    #[serde(default)]
    pub name: Option<String>,
    /// Its Futhark type: a primitive (`i64`), an array (`[][]f64`) or an opaque type's name.
    #[serde(rename = "type")]
    pub ty: String,
    /// Whether the entry point consumes it.
    #[serde(default)]
    pub unique: bool,
}

/// A result of an entry point.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Output {
    /// Its Futhark type.
    #[serde(rename = "type")]
    pub ty: String,
    /// Whether it is fresh (aliases nothing).
    #[serde(default)]
    pub unique: bool,
}

/// An array or opaque type of the C API.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum TypeInfo {
    /// A regular array of a primitive type.
    Array {
        /// The C type, `struct futhark_f64_1d *`.
        ctype: String,
        /// Its rank.
        rank: usize,
        /// The element type, `f64`.
        elemtype: String,
        /// Its functions.
        ops: ArrayOps,
    },
    /// An opaque value (records, arrays of records, …).
    Opaque {
        /// The C type, `struct futhark_opaque_x *`.
        ctype: String,
        /// Its functions.
        ops: OpaqueOps,
        /// For a record: how to build it and read its fields.
        #[serde(default)]
        record: Option<RecordOps>,
    },
}

/// The functions of an array type.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ArrayOps {
    /// `futhark_new_f64_1d(ctx, data, dim0, …)`.
    pub new: String,
    /// `futhark_free_f64_1d(ctx, arr)`.
    pub free: String,
    /// `futhark_shape_f64_1d(ctx, arr)`: a pointer to `rank` `int64_t`s.
    pub shape: String,
    /// `futhark_values_f64_1d(ctx, arr, data)`.
    pub values: String,
    /// `futhark_new_raw_f64_1d(ctx, data, dim0, …)`: an array over memory the caller keeps alive,
    /// without a copy (host memory for `c` and `multicore`; absent before Futhark 0.22).
    #[serde(default)]
    pub new_raw: Option<String>,
    /// `futhark_values_raw_f64_1d(ctx, arr)`: the array's own memory (host memory for `c` and
    /// `multicore`; absent before Futhark 0.22).
    #[serde(default)]
    pub values_raw: Option<String>,
}

/// The functions of an opaque type.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct OpaqueOps {
    /// `futhark_free_opaque_x(ctx, obj)`.
    pub free: String,
}

/// How to build a record and read its fields.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct RecordOps {
    /// `futhark_new_opaque_x(ctx, &out, field0, …)`, fields in the order of `fields`.
    pub new: String,
    /// The fields.
    pub fields: Vec<RecordField>,
}

/// A field of a record type.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct RecordField {
    /// Its name (`0`, `1`, … for tuples).
    pub name: String,
    /// Its Futhark type.
    #[serde(rename = "type")]
    pub ty: String,
    /// `futhark_project_opaque_x_name(ctx, &out, obj)`.
    pub project: String,
}

impl Manifest {
    /// Parses a manifest.
    pub fn parse(json: &str) -> Result<Manifest, String> {
        serde_json::from_str(json).map_err(|e| format!("the Futhark manifest does not parse: {e}"))
    }

    /// Fills in the raw values function of each array type that the manifest leaves out but the
    /// library's C header declares (Futhark 0.24): `unsigned char *futhark_values_raw_f64_1d(ctx,
    /// arr)`, the same in every version that has it. (0.24's `new_raw` is not taken: it copies.)
    pub fn values_raw_from_header(&mut self, header: &str) {
        for info in self.types.values_mut() {
            if let TypeInfo::Array { ops, .. } = info
                && ops.values_raw.is_none()
                && let Some(rest) = ops.values.strip_prefix("futhark_values_")
            {
                let raw = format!("futhark_values_raw_{rest}");
                let declared = format!(
                    "unsigned char *{raw}(struct futhark_context *ctx, struct futhark_{rest} *arr);"
                );
                if header.contains(&declared) {
                    ops.values_raw = Some(raw);
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) const SAMPLE: &str = r#"{
  "backend": "multicore",
  "version": "0.25.16",
  "entry_points": {
    "site_a": {
      "cfun": "futhark_entry_site_a",
      "tuning_params": [],
      "inputs": [
        {"name": "s", "type": "[]f64", "unique": false},
        {"name": "c", "type": "i64", "unique": false}
      ],
      "outputs": [{"type": "f64", "unique": false}]
    },
    "site_b": {
      "cfun": "futhark_entry_site_b",
      "tuning_params": [],
      "inputs": [{"name": "m", "type": "[][]i64", "unique": false}],
      "outputs": [{"type": "(f64, []i64)", "unique": false}]
    }
  },
  "types": {
    "[]f64": {
      "kind": "array", "ctype": "struct futhark_f64_1d *", "rank": 1, "elemtype": "f64",
      "ops": {"new": "futhark_new_f64_1d", "free": "futhark_free_f64_1d",
              "shape": "futhark_shape_f64_1d", "values": "futhark_values_f64_1d",
              "index": "futhark_index_f64_1d", "new_raw": "futhark_new_raw_f64_1d",
              "values_raw": "futhark_values_raw_f64_1d"}
    },
    "[]i64": {
      "kind": "array", "ctype": "struct futhark_i64_1d *", "rank": 1, "elemtype": "i64",
      "ops": {"new": "futhark_new_i64_1d", "free": "futhark_free_i64_1d",
              "shape": "futhark_shape_i64_1d", "values": "futhark_values_i64_1d"}
    },
    "[][]i64": {
      "kind": "array", "ctype": "struct futhark_i64_2d *", "rank": 2, "elemtype": "i64",
      "ops": {"new": "futhark_new_i64_2d", "free": "futhark_free_i64_2d",
              "shape": "futhark_shape_i64_2d", "values": "futhark_values_i64_2d"}
    },
    "(f64, []i64)": {
      "kind": "opaque", "ctype": "struct futhark_opaque_tup2_f64_arr_i64_1d *",
      "ops": {"free": "futhark_free_opaque_tup2_f64_arr_i64_1d",
              "store": "futhark_store_opaque_tup2_f64_arr_i64_1d",
              "restore": "futhark_restore_opaque_tup2_f64_arr_i64_1d"},
      "record": {
        "new": "futhark_new_opaque_tup2_f64_arr_i64_1d",
        "fields": [
          {"name": "0", "type": "f64", "project": "futhark_project_opaque_tup2_f64_arr_i64_1d_0"},
          {"name": "1", "type": "[]i64", "project": "futhark_project_opaque_tup2_f64_arr_i64_1d_1"}
        ]
      }
    }
  }
}"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_futhark_0_25_manifest() {
        let m = Manifest::parse(SAMPLE).unwrap();
        assert_eq!(m.backend, "multicore");
        assert_eq!(m.entry_points["site_a"].inputs[1].ty, "i64");
        assert_eq!(m.entry_points["site_b"].outputs[0].ty, "(f64, []i64)");
        match &m.types["[][]i64"] {
            TypeInfo::Array { rank, elemtype, .. } => {
                assert_eq!((*rank, elemtype.as_str()), (2, "i64"))
            }
            other => panic!("{other:?}"),
        }
        match &m.types["(f64, []i64)"] {
            TypeInfo::Opaque {
                record: Some(r), ..
            } => assert_eq!(r.fields[1].ty, "[]i64"),
            other => panic!("{other:?}"),
        }
        assert!(Manifest::parse("{").unwrap_err().contains("does not parse"));
    }

    #[test]
    fn raw_values_functions_come_from_the_header_where_the_manifest_lacks_them() {
        let mut m = Manifest::parse(SAMPLE).unwrap();
        let ops = |m: &Manifest, t: &str| match &m.types[t] {
            TypeInfo::Array { ops, .. } => ops.values_raw.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(ops(&m, "[]i64"), None);
        // Futhark 0.24's header: `[]i64` gets its function, `[][]i64` is not declared.
        m.values_raw_from_header(
            "unsigned char *futhark_values_raw_i64_1d(struct futhark_context *ctx, struct futhark_i64_1d *arr);\n",
        );
        assert_eq!(
            ops(&m, "[]i64").as_deref(),
            Some("futhark_values_raw_i64_1d")
        );
        assert_eq!(ops(&m, "[][]i64"), None);
        assert_eq!(
            ops(&m, "[]f64").as_deref(),
            Some("futhark_values_raw_f64_1d")
        );
    }
}
