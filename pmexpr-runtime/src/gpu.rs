//! The GPU probe: is there an NVIDIA GPU this process can use, and which?
//!
//! The probe loads the CUDA driver library (`libcuda.so.1`) itself, at run time, and calls only
//! `cuInit` and device queries, so it never panics: cudarc panics when `libcuda` is absent, so
//! nothing GPU-related may run before this probe has said yes. Every way of failing — no library,
//! a failing `cuInit`, no device, a driver older than the PTX — is a [`GpuUnavailable`] with a
//! one-line reason for the user. The result is computed once per process.

use std::ffi::{c_char, c_int, c_uint};
use std::fmt;
use std::sync::OnceLock;

/// The GPU the probe found (the first device).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuInfo {
    /// The device name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Compute capability `(major, minor)`, e.g. `(9, 0)`.
    pub compute_capability: (i32, i32),
    /// Number of streaming multiprocessors.
    pub multiprocessors: i32,
    /// Device memory in bytes.
    pub memory: usize,
    /// The CUDA version the driver supports, as `1000 * major + 10 * minor` (13000 is 13.0).
    pub driver_version: i32,
    /// How many devices there are.
    pub devices: i32,
}

/// Why no GPU can be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuUnavailable {
    /// The CUDA driver library could not be loaded.
    NoDriverLibrary(String),
    /// A driver function is missing or failed (its name and CUDA error code).
    DriverCall(&'static str, i32),
    /// The driver works but sees no device.
    NoDevice,
    /// The driver is older than the generated code needs.
    DriverTooOld {
        /// What the driver supports (`1000 * major + 10 * minor`).
        driver: i32,
        /// What the code needs.
        needed: i32,
    },
}

impl fmt::Display for GpuUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuUnavailable::NoDriverLibrary(why) => {
                write!(f, "no NVIDIA driver: cannot load libcuda ({why})")
            }
            GpuUnavailable::DriverCall(call, code) => {
                write!(
                    f,
                    "the NVIDIA driver failed: {call} returned CUDA error {code}"
                )
            }
            GpuUnavailable::NoDevice => f.write_str("the NVIDIA driver sees no GPU"),
            GpuUnavailable::DriverTooOld { driver, needed } => write!(
                f,
                "the NVIDIA driver supports CUDA {} but the generated code needs CUDA {}",
                cuda_version(*driver),
                cuda_version(*needed)
            ),
        }
    }
}

impl std::error::Error for GpuUnavailable {}

/// `12090` as `12.9`.
fn cuda_version(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

impl fmt::Display for GpuInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor) = self.compute_capability;
        write!(
            f,
            "{} (sm_{major}{minor}, {} SMs, {:.0} GiB), driver for CUDA {}",
            self.name,
            self.multiprocessors,
            self.memory as f64 / (1u64 << 30) as f64,
            cuda_version(self.driver_version)
        )
    }
}

impl GpuInfo {
    /// Whether the driver can load PTX of this ISA version (`.version 8.8` needs CUDA 12.9).
    pub fn check_ptx(&self, ptx: &str) -> Result<(), GpuUnavailable> {
        match ptx_required_driver(ptx) {
            Some(needed) if needed > self.driver_version => Err(GpuUnavailable::DriverTooOld {
                driver: self.driver_version,
                needed,
            }),
            _ => Ok(()),
        }
    }
}

/// The CUDA version (`1000 * major + 10 * minor`) a driver needs to load this PTX, from its
/// `.version` directive; `None` when the PTX does not say or the version is unknown here.
pub fn ptx_required_driver(ptx: &str) -> Option<i32> {
    let version = ptx
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix(".version"))?
        .trim();
    let (major, minor) = version.split_once('.')?;
    let (major, minor): (i32, i32) = (major.parse().ok()?, minor.parse().ok()?);
    // PTX ISA 7.x came with CUDA 11.x, 8.x with 12.x (8.5 with 12.5 and 12.6, then one minor
    // later), 9.x with 13.x.
    match (major, minor) {
        (8, m @ 0..=5) => Some(12000 + 10 * m),
        (8, m @ 6..=8) => Some(12000 + 10 * (m + 1)),
        (9, m) => Some(13000 + 10 * m),
        (7, m) => Some(11000 + 10 * m),
        _ => None,
    }
}

/// The GPU of this process, probed once.
pub fn probe() -> Result<GpuInfo, GpuUnavailable> {
    static PROBE: OnceLock<Result<GpuInfo, GpuUnavailable>> = OnceLock::new();
    PROBE.get_or_init(probe_now).clone()
}

type CuResult = c_int;

fn probe_now() -> Result<GpuInfo, GpuUnavailable> {
    // SAFETY: loading the NVIDIA driver library runs its initializers, which is what every CUDA
    // program does; the library stays loaded for the life of the process (leaked below).
    let lib = ["libcuda.so.1", "libcuda.so", "nvcuda.dll"]
        .iter()
        .find_map(|name| unsafe { libloading::Library::new(name) }.ok())
        .ok_or_else(|| {
            GpuUnavailable::NoDriverLibrary("libcuda.so.1 is not on the library path".into())
        })?;
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    // SAFETY: (all calls below) each symbol is transmuted to the signature cuda.h gives it, and
    // a missing one is an error, not a null call; every pointer passed is to a live local of the
    // right type and size. `buf` is zeroed and the driver is told 255 of its 256 bytes, so it
    // ends in a NUL, where `CStr::from_ptr` stops.
    unsafe {
        let sym = |name: &'static str| -> Result<*const (), GpuUnavailable> {
            lib.get::<*const ()>(name.as_bytes())
                .map(|s| *s)
                .map_err(|_| GpuUnavailable::DriverCall(name, -1))
        };
        let check = |name: &'static str, r: CuResult| {
            if r == 0 {
                Ok(())
            } else {
                Err(GpuUnavailable::DriverCall(name, r))
            }
        };
        let cu_init: extern "C" fn(c_uint) -> CuResult = std::mem::transmute(sym("cuInit")?);
        check("cuInit", cu_init(0))?;
        let get_version: extern "C" fn(*mut c_int) -> CuResult =
            std::mem::transmute(sym("cuDriverGetVersion")?);
        let mut driver_version = 0;
        check("cuDriverGetVersion", get_version(&mut driver_version))?;
        let get_count: extern "C" fn(*mut c_int) -> CuResult =
            std::mem::transmute(sym("cuDeviceGetCount")?);
        let mut devices = 0;
        check("cuDeviceGetCount", get_count(&mut devices))?;
        if devices < 1 {
            return Err(GpuUnavailable::NoDevice);
        }
        let device_get: extern "C" fn(*mut c_int, c_int) -> CuResult =
            std::mem::transmute(sym("cuDeviceGet")?);
        let mut dev = 0;
        check("cuDeviceGet", device_get(&mut dev, 0))?;
        let get_name: extern "C" fn(*mut c_char, c_int, c_int) -> CuResult =
            std::mem::transmute(sym("cuDeviceGetName")?);
        let mut buf = [0 as c_char; 256];
        check("cuDeviceGetName", get_name(buf.as_mut_ptr(), 255, dev))?;
        let name = std::ffi::CStr::from_ptr(buf.as_ptr())
            .to_string_lossy()
            .into_owned();
        let get_attr: extern "C" fn(*mut c_int, c_int, c_int) -> CuResult =
            std::mem::transmute(sym("cuDeviceGetAttribute")?);
        let attr = |a: c_int| -> Result<i32, GpuUnavailable> {
            let mut v = 0;
            check("cuDeviceGetAttribute", get_attr(&mut v, a, dev))?;
            Ok(v)
        };
        // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, _COMPUTE_CAPABILITY_MAJOR, _MINOR.
        let (multiprocessors, major, minor) = (attr(16)?, attr(75)?, attr(76)?);
        let total_mem: extern "C" fn(*mut usize, c_int) -> CuResult =
            std::mem::transmute(sym("cuDeviceTotalMem_v2")?);
        let mut memory = 0usize;
        check("cuDeviceTotalMem_v2", total_mem(&mut memory, dev))?;
        Ok(GpuInfo {
            name,
            compute_capability: (major, minor),
            multiprocessors,
            memory,
            driver_version,
            devices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_answers_without_panicking() {
        // On a machine without a GPU this is an error with a reason; with one, the device.
        match probe() {
            Ok(info) => {
                assert!(
                    info.devices >= 1 && info.compute_capability.0 >= 3,
                    "{info}"
                );
                println!("GPU: {info}");
            }
            Err(why) => {
                assert!(!why.to_string().is_empty());
                println!("no GPU: {why}");
            }
        }
        // Probed once: the same answer again.
        assert_eq!(probe(), probe());
    }

    #[test]
    fn ptx_versions_map_to_driver_versions() {
        let ptx = "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.8\n.target sm_80\n";
        assert_eq!(ptx_required_driver(ptx), Some(12090));
        assert_eq!(ptx_required_driver(".version 9.0\n"), Some(13000));
        assert_eq!(ptx_required_driver(".version 8.5"), Some(12050));
        assert_eq!(ptx_required_driver("no version"), None);
        let info = GpuInfo {
            name: "test".into(),
            compute_capability: (9, 0),
            multiprocessors: 132,
            memory: 80 << 30,
            driver_version: 13000,
            devices: 1,
        };
        assert_eq!(info.check_ptx(ptx), Ok(()));
        let old = GpuInfo {
            driver_version: 12040,
            ..info
        };
        assert_eq!(
            old.check_ptx(ptx).unwrap_err().to_string(),
            "the NVIDIA driver supports CUDA 12.4 but the generated code needs CUDA 12.9"
        );
    }
}
