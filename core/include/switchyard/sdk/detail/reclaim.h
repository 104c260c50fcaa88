// SPDX-License-Identifier: MIT
#pragma once

// The SDK's inline internals, not its interface: the epoch-based reclamation that lets a
// TupleRegistry free the cells it retired. Plugin code compiles it (TupleRegistry is a
// template) but never names it; it may change with any contract revision (docs/plugins.md,
// "Compatibility").
//
// Each thread that reads a registry has a ReaderRecord. A reader pins its record before it
// reads a table or a memo and holds the pin while a CellRef lives; pinning from zero stamps
// the record with an epoch no later than the global one (the one the last reclaim pass left in
// the record, read from the record's own cache line). A registry retires a batch of cells at
// epoch b (after publishing the table without them) and frees it once every pinned record is
// stamped later than b. The reader's side is plain loads and stores on its own record (no
// fence, no atomic read-modify-write); the reclaimer pays for the ordering with a
// process-wide barrier (membarrier) before it reads the records.

#include <switchyard/core_export.h>

#include <atomic>
#include <cstdint>

namespace switchyard::detail {

struct alignas(64) ReaderRecord {
    // Pins taken and released by the owning thread: only it writes, with plain stores.
    std::atomic<std::int64_t> own{0};
    // Pins other threads released (a CellRef moved away and destroyed there): only decreases.
    std::atomic<std::int64_t> foreign{0};
    // The stamp taken when the pin count last left zero (no older pin is held).
    std::atomic<std::uint64_t> epoch{0};
    // The stamp the next pin from zero takes: the global epoch as a reclaim pass last read
    // it (written by reclaim passes, read by the owner).
    std::atomic<std::uint64_t> next_stamp{0};
};

/// The calling thread's record, created (or reused) on its first call.
SWITCHYARD_CORE_EXPORT ReaderRecord* attach_reader();
/// The epoch a batch retired now carries (the global epoch moves past it).
SWITCHYARD_CORE_EXPORT std::uint64_t retire_epoch() noexcept;
/// After a process-wide barrier: the oldest epoch a pinned record carries (~0 when none is
/// pinned). A batch retired at an epoch below it is unreachable. 0 (nothing may be freed)
/// when the platform offers no such barrier.
SWITCHYARD_CORE_EXPORT std::uint64_t oldest_pinned_epoch();

// This module's cached pointer to the thread's record.
inline ReaderRecord*& reader_slot() noexcept {
    thread_local constinit ReaderRecord* record = nullptr;
    return record;
}

[[gnu::always_inline]] inline ReaderRecord* this_reader() {
    ReaderRecord*& r = reader_slot();
    if (!r) [[unlikely]]
        r = attach_reader();
    return r;
}

/// Adds a pin on the calling thread's record; `oldest` is the epoch the new pin must not be
/// younger than (a copy of a CellRef pinned elsewhere), ~0 for a fresh read.
[[gnu::always_inline]] inline ReaderRecord* pin(std::uint64_t oldest = ~0ull) {
    ReaderRecord* r = this_reader();
    const std::int64_t n = r->own.load(std::memory_order_relaxed);
    if (n + r->foreign.load(std::memory_order_relaxed) == 0) {
        const std::uint64_t now = r->next_stamp.load(std::memory_order_acquire);
        r->epoch.store(now < oldest ? now : oldest, std::memory_order_relaxed);
    } else if (oldest < r->epoch.load(std::memory_order_relaxed)) {
        r->epoch.store(oldest, std::memory_order_relaxed);
    }
    r->own.store(n + 1, std::memory_order_release);
    // The reclaimer's barrier orders this store before the reads that follow; the compiler
    // must not move them above it.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return r;
}

[[gnu::always_inline]] inline void unpin(ReaderRecord* r) noexcept {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (r == reader_slot()) [[likely]]
        r->own.store(r->own.load(std::memory_order_relaxed) - 1, std::memory_order_release);
    else
        r->foreign.fetch_sub(1, std::memory_order_release);
}

/// A pin for the extent of a scope (a listing, a lookup), or until release() hands it on.
class ReadPin {
public:
    [[gnu::always_inline]] ReadPin() : m_record(pin()) {}
    [[gnu::always_inline]] ~ReadPin() {
        if (m_record)
            unpin(m_record);
    }
    ReadPin(const ReadPin&) = delete;
    ReadPin& operator=(const ReadPin&) = delete;
    /// The pin, no longer this scope's to release.
    [[gnu::always_inline]] ReaderRecord* release() noexcept {
        ReaderRecord* r = m_record;
        m_record = nullptr;
        return r;
    }

private:
    ReaderRecord* m_record;
};

} // namespace switchyard::detail
