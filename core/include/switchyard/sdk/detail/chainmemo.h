// SPDX-License-Identifier: MIT
#pragma once

// The SDK's inline internals, not its interface: TupleRegistry's per-thread chain memo. Plugin
// code compiles it (TupleRegistry is a template) but never names it; it may change with any
// contract revision (docs/plugins.md, "Compatibility").

#include <switchyard/core_export.h>
#include <switchyard/sdk/tuplekey.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace switchyard::detail {

// What one thread knows about a chain it resolved: which rungs are declared in one
// generation of one registry. Plain data, so the hot path reads it without a TLS guard. The
// cells are the registry's: read only while the generation is the memo's and the thread is
// pinned (detail/reclaim.h), so a retired cell is never reached; a memo of a destroyed
// registry is never read again (registry ids are never reused). Untyped (every registry's
// memos share the thread's slots, told apart by the registry id): the registry casts its
// cells back.
inline constexpr std::size_t kMemoRungs = 16; // longer chains take the general path
inline constexpr std::size_t kChainMemos = 8; // per thread, for all registries
struct ChainMemo {
    std::uint64_t registry = 0; // 0: no registry has this id
    std::uint64_t generation = 0;
    std::uint32_t size = 0;
    std::uint32_t declared_count = 0;
    bool has_placeholder = false;
    const void* cells[kMemoRungs] = {};  // the declared rungs (const Cell*), in chain order
    const void* owners[kMemoRungs] = {}; // the same, as the registry's owning `const CellPtr*`
    std::uint64_t ids[kMemoRungs] = {};  // the chain's key ids
};

/// The calling thread's kChainMemos memos. They live in the core, not in the SDK's inline
/// code: a plugin's instantiation of TupleRegistry holds no state of its own.
SWITCHYARD_CORE_EXPORT ChainMemo* thread_chain_memos() noexcept;

/// The calling thread's most recent snapshots of registry tables (TupleRegistry::current()),
/// untyped like the memos; in the core for the same reason.
struct TableCache {
    struct Entry {
        std::uint64_t id = 0; // the registry's id; 0: none
        std::uint64_t generation = ~0ull;
        std::shared_ptr<const void> table;
    };
    Entry entries[4];
    unsigned next_victim = 0;
};
SWITCHYARD_CORE_EXPORT TableCache& thread_table_cache() noexcept;

/// Nonzero when the first `size` ids differ from the keys' ids (size <= kMemoRungs).
[[gnu::always_inline]] inline std::uint64_t
chain_ids_differ(const std::uint64_t* id, const TupleKey* key, std::size_t size) noexcept {
    // Unrolled (a loop costs twice the instructions): three per rung, no branch.
    std::uint64_t diff = 0;
    static_assert(kMemoRungs == 16);
    switch (size) {
    case 16:
        diff |= id[15] ^ key[15].id();
        [[fallthrough]];
    case 15:
        diff |= id[14] ^ key[14].id();
        [[fallthrough]];
    case 14:
        diff |= id[13] ^ key[13].id();
        [[fallthrough]];
    case 13:
        diff |= id[12] ^ key[12].id();
        [[fallthrough]];
    case 12:
        diff |= id[11] ^ key[11].id();
        [[fallthrough]];
    case 11:
        diff |= id[10] ^ key[10].id();
        [[fallthrough]];
    case 10:
        diff |= id[9] ^ key[9].id();
        [[fallthrough]];
    case 9:
        diff |= id[8] ^ key[8].id();
        [[fallthrough]];
    case 8:
        diff |= id[7] ^ key[7].id();
        [[fallthrough]];
    case 7:
        diff |= id[6] ^ key[6].id();
        [[fallthrough]];
    case 6:
        diff |= id[5] ^ key[5].id();
        [[fallthrough]];
    case 5:
        diff |= id[4] ^ key[4].id();
        [[fallthrough]];
    case 4:
        diff |= id[3] ^ key[3].id();
        [[fallthrough]];
    case 3:
        diff |= id[2] ^ key[2].id();
        [[fallthrough]];
    case 2:
        diff |= id[1] ^ key[1].id();
        [[fallthrough]];
    case 1:
        diff |= id[0] ^ key[0].id();
        [[fallthrough]];
    default:
        break;
    }
    return diff;
}

} // namespace switchyard::detail
