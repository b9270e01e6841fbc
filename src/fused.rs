//! The napi side of the exporter's fused mapping (`genkit-for-maple/otlp` with the `genkit`
//! option; issue 8, item 3; the rules: core `fused` + `span`).
//!
//! [`fused_read`] reads a batch on the JavaScript thread exactly as [`super::export`] does (the
//! only main-thread work: copying the span fields out of V8) and returns a [`FusedBatch`]. Its
//! `map()` runs on the libuv thread pool: it maps the spans in batch order with the processor's
//! `Mapper` state (shared, `Arc<Mutex>`) and encodes the request. The JavaScript side runs one
//! `map()` at a time per exporter, batches in the order the `BatchSpanProcessor` hands them over,
//! so the tool call id pairing sees spans in end order across batches (the mutex only makes the
//! sharing sound). A span the core cannot map exactly as the processor would stops the task
//! before anything of that span is written: `map()` resolves to its index, the JavaScript side
//! runs the processor on a copy of the span's attributes and hands the result back with
//! `replaceAttributes(index, attributes)`, and the next `map()` continues after it.

use crate::export::{read_attributes, read_batch_with_positions, SpanPosition};
use crate::flat::{self as flat_reader, Flat};
use crate::seam::Mapper;
use genkit_for_maple_core::encode::{self, proto::collector::trace::v1::ExportTraceServiceRequest};
use genkit_for_maple_core::fused::{self, Fused};
use genkit_for_maple_core::span;
use napi::bindgen_prelude::{AsyncTask, Buffer, Either, JsValue, Object};
use napi::{Env, Task};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard};

/// One batch between its read and its bytes.
struct State {
    /// A batch read by `fusedReadFlat`: built into `request` and `positions` by the first `map()`,
    /// on the pool.
    flat: Option<Flat>,
    request: ExportTraceServiceRequest,
    positions: Vec<SpanPosition>,
    /// The next span (batch index) to map.
    next: usize,
    omit: bool,
    /// Problem flags of the spans mapped here, OR-ed, and the first span that had any.
    problems: u32,
    problem_span: Option<usize>,
}

/// The span at a read position (resource, scope, span index) of the request.
fn span_at(
    request: &mut ExportTraceServiceRequest,
    r: usize,
    s: usize,
    k: usize,
) -> Result<&mut genkit_for_maple_core::encode::proto::trace::v1::Span, &'static str> {
    request
        .resource_spans
        .get_mut(r)
        .and_then(|g| g.scope_spans.get_mut(s))
        .and_then(|g| g.spans.get_mut(k))
        .ok_or("internal: a span position is out of range")
}

/// Locks a mutex, taking a poisoned one as it is (a panic was caught; the state is still usable).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A batch read by [`fused_read`], mapped and encoded by [`FusedBatch::map`].
#[napi]
pub struct FusedBatch {
    state: Arc<Mutex<Option<State>>>,
    mapper: Arc<Mutex<span::Mapper>>,
}

impl FusedBatch {
    /// A batch to map: read by `js/flat.js` (`flat`, the request built by the first `map()`) or by
    /// the napi reader (`request` and the spans' `positions`).
    fn new(
        flat: Option<Flat>,
        request: ExportTraceServiceRequest,
        positions: Vec<SpanPosition>,
        mapper: &Mapper,
        omit: bool,
    ) -> FusedBatch {
        FusedBatch {
            state: Arc::new(Mutex::new(Some(State {
                flat,
                request,
                positions,
                next: 0,
                omit,
                problems: 0,
                problem_span: None,
            }))),
            mapper: mapper.shared(),
        }
    }
}

/// Reads `spans` (an array of `ReadableSpan`s) on the calling thread as `encodeOtlpTraces` does,
/// for the fused mapping with `mapper`'s options and state; `omitGenkitInputOutput` leaves
/// `genkit:input` / `genkit:output` out of the request. Throws an `Error` naming the reason (and
/// reads nothing) when `encodeOtlpTraces` would.
#[napi]
pub fn fused_read(
    env: Env,
    spans: Object<'_>,
    mapper: &Mapper,
    omit_genkit_input_output: bool,
) -> napi::Result<FusedBatch> {
    crate::quiet_panics();
    let raw = spans.raw();
    let read = catch_unwind(AssertUnwindSafe(|| {
        read_batch_with_positions(env.raw(), raw)
    }));
    match read {
        Ok(Ok((request, positions))) => Ok(FusedBatch::new(
            None,
            request,
            positions,
            mapper,
            omit_genkit_input_output,
        )),
        Ok(Err(reason)) => Err(napi::Error::from_reason(reason)),
        Err(_) => Err(napi::Error::from_reason("panic while reading the spans")),
    }
}

/// [`fused_read`] for a batch read by `js/flat.js` (its `read()` hands over `nums`, `len`,
/// `chunks`, `bigs`, `wide`, `bytes`): copies the stream on the calling thread; the request is built from
/// it by the first `map()`, on the thread pool. Throws an `Error` when the arguments are not of
/// those types or memory runs out.
#[napi]
#[allow(clippy::too_many_arguments)]
pub fn fused_read_flat(
    env: Env,
    nums: Object<'_>,
    len: u32,
    chunks: Object<'_>,
    bigs: Object<'_>,
    wide: Object<'_>,
    bytes: Object<'_>,
    mapper: &Mapper,
    omit_genkit_input_output: bool,
) -> napi::Result<FusedBatch> {
    let flat = flat_reader::read_flat_caught(&env, &nums, len, &chunks, &bigs, &wide, &bytes)?;
    Ok(FusedBatch::new(
        Some(flat),
        ExportTraceServiceRequest::default(),
        Vec::new(),
        mapper,
        omit_genkit_input_output,
    ))
}

/// What one `map()` ends with.
pub enum MapOutput {
    /// The encoded request.
    Bytes(Vec<u8>),
    /// The batch index of a span the processor must map.
    NeedsJs(u32),
}

/// The pool half of [`FusedBatch::map`].
pub struct MapTask {
    state: Arc<Mutex<Option<State>>>,
    mapper: Arc<Mutex<span::Mapper>>,
}

impl MapTask {
    fn run(&self) -> Result<MapOutput, &'static str> {
        let mut guard = lock(&self.state);
        let Some(state) = guard.as_mut() else {
            return Err("internal: the batch was already encoded");
        };
        if let Some(flat) = state.flat.as_ref() {
            // Taken only once it decodes: after a failure the batch is not left as an empty
            // request that a second `map()` would encode.
            let mut positions = Vec::new();
            state.request = flat_reader::decode(flat, Some(&mut positions))?;
            state.positions = positions;
            state.flat = None;
        }
        {
            let mut mapper = lock(&self.mapper);
            while let Some(&(r, s, k)) = state.positions.get(state.next) {
                let span = span_at(&mut state.request, r, s, k)?;
                match fused::map_span(&mut mapper, span, crate::HANDOFF_UNITS) {
                    Fused::NeedsJs => return Ok(MapOutput::NeedsJs(state.next as u32)),
                    Fused::Mapped(problems) => {
                        if problems != 0 {
                            state.problems |= problems;
                            state.problem_span.get_or_insert(state.next);
                        }
                    }
                }
                if state.omit {
                    fused::omit_genkit_input_output(span);
                }
                state.next += 1;
            }
        }
        let state = guard
            .take()
            .ok_or("internal: the batch was already encoded")?;
        // Mapped: the problems stay readable after the request is gone.
        *guard = Some(State {
            flat: None,
            request: ExportTraceServiceRequest::default(),
            positions: Vec::new(),
            next: usize::MAX,
            omit: state.omit,
            problems: state.problems,
            problem_span: state.problem_span,
        });
        drop(guard);
        encode::encode(&state.request)
            .map(MapOutput::Bytes)
            .map_err(|_| "out of memory while encoding the OTLP request")
    }
}

impl Task for MapTask {
    type Output = MapOutput;
    type JsValue = Either<Buffer, u32>;

    fn compute(&mut self) -> napi::Result<MapOutput> {
        match catch_unwind(AssertUnwindSafe(|| self.run())) {
            Ok(Ok(out)) => Ok(out),
            Ok(Err(reason)) => Err(napi::Error::from_reason(reason)),
            Err(_) => Err(napi::Error::from_reason(
                "panic while mapping or encoding the OTLP request",
            )),
        }
    }

    fn resolve(&mut self, _env: Env, output: MapOutput) -> napi::Result<Either<Buffer, u32>> {
        Ok(match output {
            MapOutput::Bytes(bytes) => Either::A(bytes.into()),
            MapOutput::NeedsJs(index) => Either::B(index),
        })
    }
}

#[napi]
impl FusedBatch {
    /// Maps the spans not mapped yet, in batch order, on the libuv thread pool, and encodes the
    /// request: resolves to its protobuf bytes (a `Buffer`), or to the batch index of the first
    /// span the processor must map (then nothing of that span was written: call
    /// `replaceAttributes`, then `map()` again). Rejects on an internal error or when memory runs
    /// out; never call it again before it settles.
    #[napi]
    pub fn map(&self) -> AsyncTask<MapTask> {
        AsyncTask::new(MapTask {
            state: Arc::clone(&self.state),
            mapper: Arc::clone(&self.mapper),
        })
    }

    /// Replaces the attributes of the span at batch index `index` (the one `map()` named) by the
    /// attribute map `attributes` (the processor's output on a copy), read as the span reader
    /// reads attributes; the next `map()` continues after it. Throws when `index` is not the span
    /// `map()` stopped at or the map cannot be read (the batch is unchanged then).
    #[napi]
    pub fn replace_attributes(
        &self,
        env: Env,
        index: u32,
        attributes: Object<'_>,
    ) -> napi::Result<()> {
        let raw = attributes.raw();
        let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<(), &'static str> {
            let values = read_attributes(env.raw(), raw)?;
            let mut guard = lock(&self.state);
            let state = guard.as_mut().ok_or("the batch was already encoded")?;
            if state.next != index as usize {
                return Err("not the span the mapping stopped at");
            }
            let &(r, s, k) = state
                .positions
                .get(state.next)
                .ok_or("not the span the mapping stopped at")?;
            let span = span_at(&mut state.request, r, s, k)?;
            span.attributes = values;
            if state.omit {
                fused::omit_genkit_input_output(span);
            }
            state.next += 1;
            Ok(())
        }));
        match outcome {
            Ok(Ok(())) => Ok(()),
            Ok(Err(reason)) => Err(napi::Error::from_reason(reason)),
            Err(_) => Err(napi::Error::from_reason(
                "panic while reading the attributes",
            )),
        }
    }

    /// The problem flags of the spans mapped on the pool (the processor's flags), OR-ed; `0`
    /// when none.
    #[napi(getter)]
    pub fn problems(&self) -> u32 {
        lock(&self.state).as_ref().map_or(0, |s| s.problems)
    }

    /// The batch index of the first span with problem flags, or `-1`.
    #[napi(getter)]
    pub fn problem_span(&self) -> i64 {
        lock(&self.state)
            .as_ref()
            .and_then(|s| s.problem_span)
            .map_or(-1, |i| i as i64)
    }
}
