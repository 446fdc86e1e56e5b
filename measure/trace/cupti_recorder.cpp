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

char const* phase_name(Phase p) {
  static constexpr std::array<char const*, static_cast<int>(Phase::kCount)> kNames = {
      "outside", "args", "get_workspace_size", "workspace_alloc",
      "can_implement", "initialize", "run", "workspace_free"};
  int i = static_cast<int>(p);
  return (i >= 0 && i < static_cast<int>(Phase::kCount)) ? kNames[i] : "invalid";
}

namespace trace {
namespace {

thread_local Phase t_phase = Phase::kOutside;

constexpr int kPhases = static_cast<int>(Phase::kCount);
constexpr int kMaxCbid = CUPTI_DRIVER_TRACE_CBID_SIZE > CUPTI_RUNTIME_TRACE_CBID_SIZE
                             ? CUPTI_DRIVER_TRACE_CBID_SIZE : CUPTI_RUNTIME_TRACE_CBID_SIZE;

// [phase][0 = runtime, 1 = driver][callback id]
std::array<std::array<std::array<std::atomic<uint64_t>, kMaxCbid>, 2>, kPhases> g_counts;
std::mutex g_mutex;
CUpti_SubscriberHandle g_subscriber = nullptr;
std::atomic<bool> g_counting{false};
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

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
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

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::vector<ActivityRecord> local;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_RUNTIME || record->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
      auto const* api = reinterpret_cast<CUpti_ActivityAPI const*>(record);
      bool driver = record->kind == CUPTI_ACTIVITY_KIND_DRIVER;
      local.push_back({driver ? "driver" : "runtime",
                       callback_name(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, api->cbid),
                       api->start, api->end, api->correlationId, api->threadId});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      auto const* k = reinterpret_cast<CUpti_ActivityKernel10 const*>(record);
      local.push_back({"kernel", k->name ? k->name : "?", k->start, k->end, k->correlationId, 0});
    }
  }
  std::free(buffer);
  std::lock_guard<std::mutex> lock(g_records_mutex);
  g_records.insert(g_records.end(), local.begin(), local.end());
}

bool g_activity_registered = false;

}  // namespace

void set_phase(Phase p) noexcept { t_phase = p; }

void start_counting() {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& phase : g_counts)
    for (auto& domain : phase)
      for (auto& c : domain) c.store(0, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> el(g_encode_mutex);
    g_encodes.clear();
  }
  if (g_subscriber == nullptr) {
    check(cuptiSubscribe(&g_subscriber, reinterpret_cast<CUpti_CallbackFunc>(on_api), nullptr), "cuptiSubscribe");
  }
  check(cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "cuptiEnableDomain(runtime)");
  check(cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API), "cuptiEnableDomain(driver)");
  g_counting = true;
}

void stop_counting() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_subscriber != nullptr) {
    // Unsubscribing (not only disabling) leaves the process as if CUPTI had never been attached.
    cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
    cuptiEnableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
    cuptiUnsubscribe(g_subscriber);
    g_subscriber = nullptr;
  }
  g_counting = false;
}

bool counting() { return g_counting; }

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
  {
    std::lock_guard<std::mutex> rl(g_records_mutex);
    g_records.clear();
  }
  if (!g_activity_registered) {
    check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
    g_activity_registered = true;
  }
  check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "cuptiActivityEnable(RUNTIME)");
  check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), "cuptiActivityEnable(DRIVER)");
  check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable(CONCURRENT_KERNEL)");
}

std::vector<ActivityRecord> stop_activity() {
  std::lock_guard<std::mutex> lock(g_mutex);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> rl(g_records_mutex);
  std::vector<ActivityRecord> out;
  out.swap(g_records);
  return out;
}

uint64_t timestamp_ns() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

}  // namespace trace
}  // namespace co
