//! What one call has on the device: its allocations, the sequences it uploaded (once each) and
//! the tensor storages it uploaded, with how to copy each back. Marshaling ([`super::arg`]) writes
//! into it; [`super::call::Call`] owns one, launches with what it holds and copies it back.

use std::collections::HashMap;
use std::sync::Arc;

use crate::cuda::device::{DevPtr, Device, DeviceResult};
use crate::cuda::scalar::DeviceScalar;
use crate::tensor::Element;

thread_local! {
    static TENSOR_UPLOADS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many times this thread has copied a tensor's storage to a device: how tests tell that
/// tensors stay on the device from one launch to the next.
pub fn tensor_uploads_on_this_thread() -> u64 {
    TENSOR_UPLOADS.with(std::cell::Cell::get)
}

/// Stores the bytes of a tensor's device copy into its host storage.
type WriteBack<'a> = Box<dyn Fn(&[u8]) + 'a>;

/// One tensor storage on the device, and how to copy it back.
struct TensorBuf<'a> {
    dev: DevPtr,
    bytes: usize,
    write_back: WriteBack<'a>,
}

/// The device memory of one call. `'a` is the lifetime of the call's captured data: a tensor's
/// storage is borrowed until it is copied back. Everything is freed when it is dropped.
pub struct Uploads<'a> {
    device: &'static dyn Device,
    max_rank: usize,
    allocations: Vec<DevPtr>,
    seqs: HashMap<(usize, usize, usize), DevPtr>,
    tensors: Vec<TensorBuf<'a>>,
    tensor_index: HashMap<usize, usize>,
}

impl<'a> Uploads<'a> {
    /// Nothing uploaded yet, to `device`, for kernels with tensors of rank at most `max_rank`.
    pub(crate) fn new(device: &'static dyn Device, max_rank: usize) -> Self {
        Uploads {
            device,
            max_rank,
            allocations: Vec::new(),
            seqs: HashMap::new(),
            tensors: Vec::new(),
            tensor_index: HashMap::new(),
        }
    }

    /// The maximum tensor rank of the kernels.
    pub fn max_rank(&self) -> usize {
        self.max_rank
    }

    /// Copies bytes to new device memory that the call owns.
    pub(crate) fn upload(&mut self, bytes: &[u8]) -> DeviceResult<DevPtr> {
        let size = bytes.len().max(1);
        let p = self.device.alloc(size)?;
        self.allocations.push(p);
        // SAFETY: `p` was just allocated with at least `bytes.len()` bytes.
        unsafe { self.device.upload(p, bytes)? };
        Ok(p)
    }

    pub(crate) fn cached_seq(&self, key: (usize, usize, usize)) -> Option<DevPtr> {
        self.seqs.get(&key).copied()
    }

    pub(crate) fn cache_seq(&mut self, key: (usize, usize, usize), p: DevPtr) {
        self.seqs.insert(key, p);
    }

    /// The device copy of a tensor's whole storage, uploaded at its first use in the call.
    pub(crate) fn tensor<T: Element>(
        &mut self,
        root: &'a Arc<crate::tensor::Store<T>>,
    ) -> DeviceResult<DevPtr> {
        let key = Arc::as_ptr(root) as *const () as usize;
        if let Some(&i) = self.tensor_index.get(&key) {
            return Ok(self.tensors[i].dev);
        }
        let mut bytes = Vec::with_capacity(root.len() * T::SIZE);
        for c in root.iter() {
            T::load(c).put(&mut bytes);
        }
        let dev = self.upload(&bytes)?;
        TENSOR_UPLOADS.with(|c| c.set(c.get() + 1));
        let cells: &'a [T::Cell] = root.as_slice();
        self.tensor_index.insert(key, self.tensors.len());
        self.tensors.push(TensorBuf {
            dev,
            bytes: bytes.len(),
            write_back: Box::new(move |b: &[u8]| {
                for (c, chunk) in cells.iter().zip(b.chunks_exact(T::SIZE)) {
                    T::store(c, T::get(chunk));
                }
            }),
        });
        Ok(dev)
    }

    /// Copies every tensor uploaded back to the host, and forgets it (the next use uploads it
    /// again).
    pub(crate) fn copy_back(&mut self) -> DeviceResult<()> {
        let tensors = std::mem::take(&mut self.tensors);
        self.tensor_index.clear();
        for t in &tensors {
            let mut bytes = vec![0u8; t.bytes];
            // SAFETY: `t.dev` holds `t.bytes` bytes, allocated by this call.
            unsafe { self.device.download(t.dev, &mut bytes)? };
            (t.write_back)(&bytes);
        }
        Ok(())
    }
}

impl Drop for Uploads<'_> {
    fn drop(&mut self) {
        for p in self.allocations.drain(..) {
            // SAFETY: allocated by this call on this device, and no longer used.
            unsafe { self.device.free(p) };
        }
    }
}
