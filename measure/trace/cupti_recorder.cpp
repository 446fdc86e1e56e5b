// CUPTI recorder: counts CUDA runtime/driver API calls per phase (callback API) and records a
// timeline of API calls and kernels (activity API). Off until started, so timing runs pay nothing.
#include "co_trace.h"

#include <cupti.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace co {

namespace trace {
namespace {

thread_local Phase t_phase = Phase::kOutside;

constexpr int kPhases = static_cast<int>(Phase::kCount);
constexpr int kDriverCbids = static_cast<int>(CUPTI_DRIVER_TRACE_CBID_SIZE);
constexpr int kRuntimeCbids = static_cast<int>(CUPTI_RUNTIME_TRACE_CBID_SIZE);
constexpr int kMaxCbid = kDriverCbids > kRuntimeCbids ? kDriverCbids : kRuntimeCbids;

// [phase][0 = runtime, 1 = driver][callback id]
std::array<std::array<std::array<std::atomic<uint64_t>, kMaxCbid>, 2>, kPhases> g_counts;
std::mutex g_mutex;
CUpti_SubscriberHandle g_subscriber = nullptr;
bool g_counting = false;  // guarded by g_mutex
std::mutex g_encode_mutex;
std::vector<EncodeInputs> g_encodes;

void capture_encode(cuTensorMapEncodeTiled_params const* p) {
  EncodeInputs in;
  in.phase = phase_name(t_phase);
  in.data_type = p->tensorDataType;
  in.rank = p->tensorRank;
  in.address = reinterpret_cast<uint64_t>(p->globalAddress);
  for (uint32_t i = 0; i < p->tensorRank && i < 5; ++i) {
    in.dims[i] = p->globalDim[i];
    in.box[i] = p->boxDim[i];
    in.element_strides[i] = p->elementStrides[i];
    if (i + 1 < p->tensorRank) in.strides[i] = p->globalStrides[i];
  }
  in.interleave = p->interleave;
  in.swizzle = p->swizzle;
  in.l2_promotion = p->l2Promotion;
  in.oob_fill = p->oobFill;
  std::lock_guard<std::mutex> lock(g_encode_mutex);
  if (g_encodes.size() < 256) g_encodes.push_back(in);
}

void check(CUptiResult r, char const* what) {
  if (r != CUPTI_SUCCESS) {
    char const* msg = nullptr;
    cuptiGetResultString(r, &msg);
    throw std::runtime_error(std::string("CUPTI: ") + what + " failed: " + (msg ? msg : "unknown error") +
                             " (CUPTI needs a GPU and its driver)");
  }
}

void CUPTIAPI on_api(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, void const* data) {
  auto const* cb = static_cast<CUpti_CallbackData const*>(data);
  if (cb->callbackSite != CUPTI_API_ENTER || cbid >= static_cast<CUpti_CallbackId>(kMaxCbid)) {
    return;
  }
  int d = domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : 0;
  if (d == 1 && cbid == CUPTI_DRIVER_TRACE_CBID_cuTensorMapEncodeTiled) {
    capture_encode(static_cast<cuTensorMapEncodeTiled_params const*>(cb->functionParams));
  }
  g_counts[static_cast<int>(t_phase)][d][cbid].fetch_add(1, std::memory_order_relaxed);
}

// Activity buffers.
std::vector<ActivityRecord> g_records;
std::mutex g_records_mutex;
constexpr size_t kBufferBytes = 8u << 20;

std::atomic<uint64_t> g_dropped{0};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;  // no buffer: CUPTI drops records, counted in buffer_completed
  *max_records = 0;
  if (*buffer == nullptr) g_dropped.fetch_add(1);
}

std::string callback_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  char const* name = nullptr;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) {
    return "cbid_" + std::to_string(cbid);
  }
  // CUPTI appends an ABI suffix (cudaLaunchKernel_v7000); the API name is what a reader knows.
  std::string s(name);
  auto pos = s.rfind("_v");
  if (pos != std::string::npos && pos + 2 < s.size() &&
      s.find_first_not_of("0123456789", pos + 2) == std::string::npos) {
    s.resize(pos);
  }
  return s;
}

// CUPTI versions its kernel record: CUpti_ActivityKernel9 up to CUDA 12.x (API versions below 130000, CUDA 12.8 is
// 26, the toolkit), CUpti_ActivityKernel10 from CUDA 13.0. The fields read here are in both.
#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
#else
using KernelRecord = CUpti_ActivityKernel9;
#endif

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::vector<ActivityRecord> local;
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) g_dropped.fetch_add(dropped);
  CUptiResult status = CUPTI_SUCCESS;
  while ((status = cuptiActivityGetNextRecord(buffer, valid, &record)) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_RUNTIME || record->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
      auto const* api = reinterpret_cast<CUpti_ActivityAPI const*>(record);
      bool driver = record->kind == CUPTI_ACTIVITY_KIND_DRIVER;
      local.push_back({driver ? "driver" : "runtime",
                       callback_name(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, api->cbid),
                       api->start, api->end, api->correlationId, api->threadId});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      auto const* k = reinterpret_cast<KernelRecord const*>(record);
      local.push_back({"kernel", k->name ? k->name : "?", k->start, k->end, k->correlationId, 0});
    }
  }
  if (buffer != nullptr && status != CUPTI_ERROR_MAX_LIMIT_REACHED) g_dropped.fetch_add(1);  // unreadable rest
  std::free(buffer);  // free(nullptr) is a no-op: the dropped-buffer case
  std::lock_guard<std::mutex> lock(g_records_mutex);
  g_records.insert(g_records.end(), local.begin(), local.end());
}

bool g_activity_registered = false;
bool g_activity = false;

}  // namespace

void set_phase(Phase p) noexcept { t_phase = p; }

void start_counting() {
  std::lock_guard<std::mutex> lock(g_mutex);
  // One subscriber, one set of counters: a nested session would reset them and end the outer one early.
  if (g_counting) {
    throw std::logic_error("CUPTI counting is already active: count_calls() sessions cannot be nested");
  }
  for (auto& phase : g_counts)
    for (auto& domain : phase)
      for (auto& c : domain) c.store(0, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> el(g_encode_mutex);
    g_encodes.clear();
  }
  check(cuptiSubscribe(&g_subscriber, reinterpret_cast<CUpti_CallbackFunc>(on_api), nullptr), "cuptiSubscribe");
  try {
    check(cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "cuptiEnableDomain(runtime)");
    check(cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API), "cuptiEnableDomain(driver)");
  } catch (...) {
    cuptiUnsubscribe(g_subscriber);  // the enable error is the one to report
    g_subscriber = nullptr;
    throw;
  }
  g_counting = true;
}

void stop_counting() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_counting) {
    throw std::logic_error("CUPTI counting is not active: stop_counting() without start_counting()");
  }
  g_counting = false;
  // Unsubscribing (not only disabling) leaves the process as if CUPTI had never been attached. All three
  // calls run even if one fails; the first failure is reported.
  CUptiResult results[] = {cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API),
                           cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API),
                           cuptiUnsubscribe(g_subscriber)};
  g_subscriber = nullptr;
  char const* what[] = {"cuptiEnableDomain(0, runtime)", "cuptiEnableDomain(0, driver)", "cuptiUnsubscribe"};
  for (int i = 0; i < 3; ++i) check(results[i], what[i]);
}

std::vector<EncodeInputs> captured_encodes() {
  std::lock_guard<std::mutex> lock(g_encode_mutex);
  return g_encodes;
}

std::vector<CountRow> counts() {
  std::vector<CountRow> rows;
  for (int p = 0; p < kPhases; ++p) {
    for (int d = 0; d < 2; ++d) {
      auto domain = d ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
      for (int cbid = 1; cbid < kMaxCbid; ++cbid) {
        uint64_t n = g_counts[p][d][cbid].load(std::memory_order_relaxed);
        if (n != 0) {
          rows.push_back({phase_name(static_cast<Phase>(p)), d ? "driver" : "runtime",
                          callback_name(domain, static_cast<CUpti_CallbackId>(cbid)), n});
        }
      }
    }
  }
  return rows;
}

void start_activity() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_activity) {
    throw std::logic_error("a CUPTI timeline is already being recorded: record_timeline() cannot be nested");
  }
  {
    std::lock_guard<std::mutex> rl(g_records_mutex);
    g_records.clear();
  }
  if (!g_activity_registered) {
    check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
    g_activity_registered = true;
  }
  CUpti_ActivityKind const kinds[] = {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
                                      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  for (std::size_t i = 0; i < 3; ++i) {
    CUptiResult r = cuptiActivityEnable(kinds[i]);
    if (r != CUPTI_SUCCESS) {
      for (std::size_t j = 0; j < i; ++j) cuptiActivityDisable(kinds[j]);
      check(r, "cuptiActivityEnable");
    }
  }
  g_dropped = 0;
  g_activity = true;
}

std::vector<ActivityRecord> stop_activity() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_activity) {
    throw std::logic_error("no CUPTI timeline is being recorded: stop_activity() without start_activity()");
  }
  g_activity = false;
  CUptiResult results[] = {cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
                           cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME),
                           cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER),
                           cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                           cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)};
  std::vector<ActivityRecord> out;
  {
    std::lock_guard<std::mutex> rl(g_records_mutex);
    out.swap(g_records);
  }
  char const* what[] = {"cuptiActivityFlushAll", "cuptiActivityDisable(RUNTIME)", "cuptiActivityDisable(DRIVER)",
                        "cuptiActivityDisable(CONCURRENT_KERNEL)", "cuptiActivityFlushAll"};
  for (int i = 0; i < 5; ++i) check(results[i], what[i]);
  // A timeline with holes would misplace nesting and kernel times: refuse it rather than return it.
  if (g_dropped != 0) {
    throw std::runtime_error("CUPTI dropped " + std::to_string(g_dropped.load()) +
                             " activity records (a buffer could not be allocated or filled); record fewer calls");
  }
  return out;
}

}  // namespace trace
}  // namespace co
