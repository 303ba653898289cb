//! Every tuning constant of the CPU runtime in one place: when work runs in parallel, in how many
//! chunks, and how long a thread spins before it yields. Each says what it decides and why it has
//! its value; the modules that decide refer to these, none keeps a number of its own.
//!
//! The times quoted were measured on the 2-core build machine (BENCHMARKS.md has the benchmarks
//! behind them). Limits that are not a choice (the CUDA grid's size, layouts of records) stay
//! with the code they describe.

/// Below this many positions a plain loop, and a `scan`, `filter` or `scatter`, runs on the
/// calling thread: handing work to a pool from outside it costs 10–17 µs (a 32-element `map2`
/// took 17 µs through rayon, 0.01 µs on one thread), and the two passes of a parallel `scan` or
/// `filter` two such handoffs, more than that much work.
pub(crate) const SEQUENTIAL_BELOW: usize = 1 << 12;

/// A parallel level of `cpu` that is estimated to take less than this many nanoseconds runs on
/// the calling thread (`granularity`): the handoff to the pool costs 10–17 µs, and two threads
/// save half the work at best, so below about twice the handoff they cannot win. (Five-body
/// steps, a `create` and four `map2`s of five elements each, took 13 times their `seq` time
/// when every level went to the pool.)
pub(crate) const SEQUENTIAL_UNDER_NANOS: u64 = 20_000;

/// After how many calls a parallel level's cost estimate is first measured again
/// (`granularity`): a level whose work per position changed is misjudged for this many calls.
pub(crate) const GRAIN_REMEASURE_FIRST: u32 = 16;

/// The most calls between two measures of a level whose measures keep confirming its plan
/// (`granularity`): the interval doubles from [`GRAIN_REMEASURE_FIRST`] up to this, so that the
/// probe's clock reads (about 40 ns each here) are paid once per this many calls of a small
/// level, and a level whose work per position grows is misjudged for this many calls at most.
pub(crate) const GRAIN_REMEASURE_EVERY: u32 = 512;

/// A map of rows of fewer numbers runs on the calling thread when its function is a few
/// operations per number (`Backend::map_rows`'s `cheap`: a copy, a gather, arithmetic; about
/// 1 ns each): all of such work takes less than the 10–17 µs of the handoff to the pool, so no
/// number of threads can win it back. (Parboil sgemm transposes its `B` this way: `small`'s
/// 96 × 160 numbers, 1.18–1.19× rayon per call above 4096 numbers in parallel, 1.09–1.16× here.)
pub(crate) const CHEAP_ROWS_SEQUENTIAL_BELOW: usize = 1 << 14;

/// How many chunks a parallel level is cut into per thread (`map`, `map2`, `create`, reductions,
/// `par_loop`, plain loops, rows, `scan`, `filter`, `scatter`): several per thread, so that work
/// stealing can even out chunks of different costs, and few enough that each chunk's start costs
/// nothing beside its work.
pub(crate) const CHUNKS_PER_THREAD: usize = 8;

/// A level of at least this many tasks per thread saturates the workers: its tasks are marked,
/// and the keywords nested inside them run sequentially, as a hand-written rayon program
/// parallelizes the outer loop only (rayon's splitting and joining of short inner sequences, a dot
/// product per element of a `map`, was most of the Parboil ports' time). Four leaves room to
/// balance uneven tasks without an inner level.
pub(crate) const SATURATING_TASKS_PER_THREAD: usize = 4;

/// `hist` fills one private histogram per worker unless the bins outnumber the values this many
/// to one: filling and merging the private histograms streams through memory while the updates
/// are scattered, about ten times dearer each, so private histograms win until the bins are
/// several times the values.
pub(crate) const HIST_PRIVATE_BELOW_BINS_PER_VALUE: usize = 8;

/// The merge of `hist`'s private histograms cuts the bins into this many chunks per thread: the
/// merge is a plain streaming loop of even cost, so fewer chunks than
/// [`CHUNKS_PER_THREAD`] balance it.
pub(crate) const HIST_MERGE_CHUNKS_PER_THREAD: usize = 4;

/// The least bins per chunk of `hist`'s merge: below it a chunk's handoff costs more than
/// merging its bins.
pub(crate) const HIST_MERGE_MIN_BINS: usize = 1024;

/// Elements per parallel task of `tensor_gemm`'s copies between the tensors and the plain
/// buffers `matrixmultiply` works on (256 KiB of `f64`s): large enough that a task's overhead
/// is lost in its copy.
pub(crate) const GEMM_COPY_CHUNK: usize = 1 << 15;

/// A Futhark result smaller than this many bytes is copied out on the calling thread: below a
/// megabyte a parallel copy's handoff costs more than it saves.
pub(crate) const FUTHARK_PARALLEL_COPY_FROM_BYTES: usize = 1 << 20;

/// Elements per parallel task of a large Futhark result's copy (a megabyte of `f64`s): large
/// enough that a task's overhead is lost in its copy.
pub(crate) const FUTHARK_COPY_CHUNK: usize = 1 << 17;

/// How many times a thread waiting for a storage's lock spins before it yields: an exclusive
/// hold lasts one plain loop, often shorter than a yield.
pub(crate) const LOCK_SPINS: u32 = 64;

/// After how many tries in all (spins and yields) a thread waiting for a storage's lock sleeps
/// between tries ([`LOCK_SLEEP_MICROS`]): a loop that outlasts this many yields is a long
/// one, and sleeping leaves its CPUs to it.
pub(crate) const LOCK_SLEEP_AFTER: u32 = 128;

/// How long, in microseconds, a thread waiting for a storage's lock sleeps between tries once it
/// has tried [`LOCK_SLEEP_AFTER`] times: short beside a long loop, long beside a try.
pub(crate) const LOCK_SLEEP_MICROS: u64 = 50;

/// How many times the calling thread spins, waiting for the helpers' last chunks, before it
/// yields between tries: the chunks still running are one chunk's work at most, which spinning
/// usually outlasts without giving the CPU away.
pub(crate) const CALLER_WAIT_SPINS: u32 = 1 << 10;
