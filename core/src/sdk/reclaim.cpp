// SPDX-License-Identifier: MIT
#include <switchyard/sdk/detail/reclaim.h>

#include <algorithm>
#include <deque>
#include <mutex>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace switchyard::detail {

namespace {

std::atomic<std::uint64_t> g_epoch{1};

// Every record ever attached; a deque never moves them. A thread's record is reused by a
// later thread once the first has exited and no pin on it is left (pins moved to another
// thread may outlive their thread). The own/foreign counts carry over: only their sum means
// anything, and resetting them would race with a reclaimer reading them.
struct Records {
    std::mutex mutex;
    std::deque<ReaderRecord> records;
    std::deque<bool> in_use; // parallel to records
};

Records& records() {
    static auto* r = new Records; // outlives statics: threads may exit after them
    return *r;
}

std::int64_t pins(const ReaderRecord& r) {
    // foreign first: it only decreases, so the sum read this way never undercounts.
    const std::int64_t foreign = r.foreign.load(std::memory_order_acquire);
    return r.own.load(std::memory_order_acquire) + foreign;
}

// Releases the calling thread's record when it exits.
struct Attachment {
    std::size_t index = ~std::size_t{0};
    ~Attachment() {
        if (index == ~std::size_t{0})
            return;
        auto& r = records();
        std::lock_guard lock(r.mutex);
        r.in_use[index] = false;
    }
};
thread_local Attachment t_attachment;

// The barrier that orders every other thread's earlier plain stores (its pins) before what
// the caller reads next. False when the platform has none: nothing is freed then.
bool process_barrier() {
#if defined(__linux__) && defined(SYS_membarrier)
    static const int command = [] {
        if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
            return int(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
        const long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        if (supported > 0 && (supported & MEMBARRIER_CMD_GLOBAL))
            return int(MEMBARRIER_CMD_GLOBAL);
        return 0;
    }();
    return command != 0 && syscall(SYS_membarrier, command, 0, 0) == 0;
#else
    return false;
#endif
}

} // namespace

ReaderRecord* attach_reader() {
    auto& r = records();
    std::lock_guard lock(r.mutex);
    if (t_attachment.index != ~std::size_t{0}) // attached through another module's slot
        return &r.records[t_attachment.index];
    std::size_t i = 0;
    while (i < r.records.size() && (r.in_use[i] || pins(r.records[i]) != 0))
        ++i;
    if (i == r.records.size()) {
        r.records.emplace_back();
        r.in_use.push_back(false);
    }
    r.records[i].next_stamp.store(g_epoch.load(std::memory_order_acquire),
                                  std::memory_order_release);
    r.in_use[i] = true;
    t_attachment.index = i;
    return &r.records[i];
}

std::uint64_t retire_epoch() noexcept {
    return g_epoch.fetch_add(1, std::memory_order_acq_rel);
}

std::uint64_t oldest_pinned_epoch() {
    if (!process_barrier())
        return 0;
    auto& r = records();
    std::lock_guard lock(r.mutex);
    // Later pins from zero take today's epoch: what this pass finds pinned blocks a batch
    // retired since only until it is let go.
    const std::uint64_t now = g_epoch.load(std::memory_order_acquire);
    std::uint64_t oldest = ~0ull;
    for (auto& record : r.records) {
        record.next_stamp.store(now, std::memory_order_release);
        if (pins(record) > 0)
            oldest = std::min(oldest, record.epoch.load(std::memory_order_acquire));
    }
    return oldest;
}

} // namespace switchyard::detail
