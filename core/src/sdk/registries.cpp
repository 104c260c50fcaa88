// SPDX-License-Identifier: MIT
#include <switchyard/sdk/registries.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace switchyard {

namespace detail {

std::uint64_t next_registry_id() noexcept {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

namespace {
thread_local std::uint64_t t_epoch = 0;
std::atomic<std::uint64_t> g_next_epoch{1};
} // namespace

std::uint64_t availability_epoch() noexcept {
    return t_epoch;
}

AvailabilityEpoch::AvailabilityEpoch() noexcept : m_saved(t_epoch) {
    t_epoch = g_next_epoch.fetch_add(1, std::memory_order_relaxed);
}

AvailabilityEpoch::~AvailabilityEpoch() {
    t_epoch = m_saved;
}

ChainMemo* thread_chain_memos() noexcept {
    thread_local constinit ChainMemo memos[kChainMemos];
    return memos;
}

TableCache& thread_table_cache() noexcept {
    thread_local TableCache cache;
    return cache;
}

namespace {

// The intern table: every distinct tuple once (a deque never moves its elements), found
// through an open-addressing index over a hash of the parts' contents.
class InternTable {
public:
    const InternedTuple* intern(const std::string_view* parts, std::size_t count) {
        const std::size_t h = content_hash(parts, count);
        std::lock_guard lock(m_mutex);
        return insert(h, parts, count, nullptr);
    }

    // Many tuples at once (a manifest's declared cells, on the threads that read manifests):
    // the lock is taken twice for the batch instead of once a tuple, and the strings of new
    // tuples are copied outside it. One lock a tuple, held while its strings were allocated,
    // kept those threads waiting on each other (1,000 manifests x 100 cells on 2 cores: ~1,300
    // futex calls, ~200 batched; more readers, more waiting).
    void intern_all(const std::vector<DeclaredCell>& cells,
                    std::vector<const InternedTuple*>& out) {
        const std::size_t n = cells.size();
        out.assign(n, nullptr);
        std::vector<std::size_t> hashes(n);
        for (std::size_t i = 0; i < n; ++i)
            hashes[i] = content_hash(cells[i].key.data(), cells[i].key.size());
        std::vector<std::size_t> missing;
        {
            std::lock_guard lock(m_mutex);
            for (std::size_t i = 0; i < n; ++i)
                if (!(out[i] = find(hashes[i], cells[i].key.data(), cells[i].key.size())))
                    missing.push_back(i);
        }
        if (missing.empty())
            return;
        std::vector<std::vector<std::string>> owned;
        owned.reserve(missing.size());
        for (const std::size_t i : missing)
            owned.push_back(cells[i].key);
        std::lock_guard lock(m_mutex);
        for (std::size_t k = 0; k < missing.size(); ++k) {
            const std::size_t i = missing[k];
            // Found now if another thread, or an earlier cell of this batch, added it.
            out[i] = insert(hashes[i], cells[i].key.data(), cells[i].key.size(), &owned[k]);
        }
    }

private:
    // 8 bytes a slot: part of the content hash, and the tuple's position + 1 (0: empty). When
    // the table grows, each tuple's slot is found again from its kept hash (m_hashes): hashing
    // the parts again, under the lock, was a sixth of interning 100,000 declared cells.
    struct Slot {
        std::uint32_t tag = 0;
        std::uint32_t index = 0;
    };

    // The parts' hashes combined in order (with their lengths, so ("a,b") and ("a", "b")
    // hash apart).
    template <class Part> static std::size_t content_hash(const Part* parts, std::size_t count) {
        std::size_t h = count;
        for (std::size_t k = 0; k < count; ++k) {
            const std::string_view part(parts[k]);
            const std::size_t p = std::hash<std::string_view>{}(part) ^ part.size();
            h ^= p + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        }
        return h;
    }
    template <class Part>
    static bool same(const InternedTuple& t, const Part* parts, std::size_t count) {
        if (t.parts.size() != count)
            return false;
        for (std::size_t k = 0; k < count; ++k)
            if (t.parts[k] != parts[k])
                return false;
        return true;
    }
    // The tuple with these parts, or nullptr. Under the lock.
    template <class Part>
    const InternedTuple* find(std::size_t h, const Part* parts, std::size_t count) const {
        if (m_slots.empty())
            return nullptr;
        const auto tag = static_cast<std::uint32_t>(h ^ (h >> 32));
        for (std::size_t i = h & m_mask;; i = (i + 1) & m_mask) {
            const Slot& s = m_slots[i];
            if (s.index == 0)
                return nullptr;
            if (s.tag == tag && same(m_tuples[s.index - 1], parts, count))
                return &m_tuples[s.index - 1];
        }
    }

    // The tuple with these parts, added if there is none: its strings are `owned`'s (moved),
    // or copied from `parts` when `owned` is null. Under the lock.
    template <class Part>
    const InternedTuple* insert(std::size_t h, const Part* parts, std::size_t count,
                                std::vector<std::string>* owned) {
        if ((m_tuples.size() + 1) * 2 > m_slots.size())
            grow();
        const auto tag = static_cast<std::uint32_t>(h ^ (h >> 32));
        std::size_t i = h & m_mask;
        for (;; i = (i + 1) & m_mask) {
            const Slot& s = m_slots[i];
            if (s.index == 0)
                break;
            if (s.tag == tag && same(m_tuples[s.index - 1], parts, count))
                return &m_tuples[s.index - 1];
        }
        // What may throw comes first, so a failed allocation leaves the table as it was.
        std::vector<std::string> copied;
        if (!owned)
            copied.assign(parts, parts + count);
        if (m_hashes.size() == m_hashes.capacity())
            m_hashes.reserve(2 * m_hashes.size() + 1024);
        InternedTuple& t = m_tuples.emplace_back();
        t.parts = owned ? std::move(*owned) : std::move(copied);
        t.id = m_tuples.size(); // 1, 2, ...: the empty tuple is 0
        // ids are sequential: spread them over the registries' tables (Fibonacci hashing)
        const std::uint64_t f = t.id * 0x9e3779b97f4a7c15ull;
        t.hash = std::size_t(f ^ (f >> 32));
        m_hashes.push_back(h);
        m_slots[i] = Slot{tag, static_cast<std::uint32_t>(m_tuples.size())};
        return &t;
    }

    void grow() {
        const std::size_t cap = m_slots.empty() ? 1024 : m_slots.size() * 2;
        m_slots.assign(cap, Slot{});
        m_mask = cap - 1;
        for (std::size_t n = 0; n < m_tuples.size(); ++n) {
            const std::size_t h = m_hashes[n];
            std::size_t i = h & m_mask;
            while (m_slots[i].index != 0)
                i = (i + 1) & m_mask;
            m_slots[i] =
                Slot{static_cast<std::uint32_t>(h ^ (h >> 32)), static_cast<std::uint32_t>(n + 1)};
        }
    }

    std::mutex m_mutex;
    std::deque<InternedTuple> m_tuples;
    std::vector<std::size_t> m_hashes; // each tuple's content hash, by position
    std::vector<Slot> m_slots;
    std::size_t m_mask = 0;
};

InternTable& intern_table() {
    static auto* table = new InternTable; // outlives statics: keys may die after them
    return *table;
}

const InternedTuple& empty_tuple() {
    static const auto* tuple = new InternedTuple; // never destroyed, like the table
    return *tuple;
}

} // namespace

const InternedTuple* intern_tuple(const std::string_view* parts, std::size_t count) {
    if (count == 0)
        return &empty_tuple();
    return intern_table().intern(parts, count);
}

const InternedTuple* intern_tuple(const std::vector<std::string>& parts) {
    constexpr std::size_t kInline = 8;
    if (parts.size() <= kInline) {
        std::string_view views[kInline];
        for (std::size_t k = 0; k < parts.size(); ++k)
            views[k] = parts[k];
        return intern_tuple(views, parts.size());
    }
    std::vector<std::string_view> views(parts.begin(), parts.end());
    return intern_tuple(views.data(), views.size());
}

const std::vector<std::string>& empty_tuple_parts() noexcept {
    return empty_tuple().parts;
}

} // namespace detail

std::string_view to_string(CellSource source) noexcept {
    switch (source) {
    case CellSource::Registered:
        return "registered";
    case CellSource::Builtin:
        return "builtin";
    case CellSource::Plugin:
        return "plugin";
    }
    return "registered";
}

// Never destroyed: cells may be reached from plugins' statics, and a process that exits
// does not free 100,000 cells one by one.
KernelRegistry& kernels() {
    static auto* registry = new KernelRegistry("kernels", {"op", "device", "arch", "variant"});
    return *registry;
}

ComponentRegistry& components() {
    static auto* registry = new ComponentRegistry("components", {"kind", "device", "variant"});
    return *registry;
}

DeclaredCells::DeclaredCells(std::vector<DeclaredCell> cells) {
    if (cells.empty())
        return;
    m_data = std::make_shared<Data>();
    // The empty key is no table entry (detail::intern_tuple's rule).
    const bool any_empty = std::any_of(cells.begin(), cells.end(),
                                       [](const DeclaredCell& c) { return c.key.empty(); });
    if (any_empty) {
        m_data->keys.reserve(cells.size());
        for (const auto& c : cells)
            m_data->keys.push_back(detail::intern_tuple(c.key));
    } else {
        detail::intern_table().intern_all(cells, m_data->keys);
    }
    m_data->cells = std::move(cells);
}

void DeclaredCells::push_back(DeclaredCell cell) {
    if (!m_data || m_data.use_count() > 1)
        m_data = m_data ? std::make_shared<Data>(*m_data) : std::make_shared<Data>();
    m_data->keys.push_back(detail::intern_tuple(cell.key));
    m_data->cells.push_back(std::move(cell));
}

void CellRegistrar::add_kernel(KernelSpec spec) {
    KernelCell cell;
    cell.key = kernel_key(spec.op, spec.device, spec.arch, spec.variant);
    cell.fn = std::move(spec.fn);
    cell.available = std::move(spec.available);
    cell.source = m_source;
    cell.backend = m_backend;
    cell.meta = std::move(spec.meta);
    if (!cell.meta.is_object())
        cell.meta = Value::object();
    cell.meta["workspace_bytes"] = spec.workspace_bytes;
    cell.workspace_bytes = std::max<std::int64_t>(0, spec.workspace_bytes);
    if (!cell.fn)
        throw std::invalid_argument("kernel " + cell.key.to_string() + " of backend '" + m_backend +
                                    "' has no implementation");
    m_kernels.push_back(std::move(cell));
}

void CellRegistrar::add_component(ComponentSpec spec) {
    ComponentCell cell;
    cell.key = component_key(spec.kind, spec.device, spec.variant);
    cell.fn = std::move(spec.fn);
    cell.available = std::move(spec.available);
    cell.source = m_source;
    cell.backend = m_backend;
    cell.meta = spec.meta.is_object() ? std::move(spec.meta) : Value::object();
    if (!cell.fn)
        throw std::invalid_argument("component " + cell.key.to_string() + " of backend '" +
                                    m_backend + "' has no implementation");
    m_components.push_back(std::move(cell));
}

void CellRegistrar::add_device_provider(std::shared_ptr<DeviceProvider> provider) {
    if (!provider)
        throw std::invalid_argument("add_device_provider: null provider for backend '" + m_backend +
                                    "'");
    m_device_providers.push_back(std::move(provider));
}

void CellRegistrar::commit(KernelRegistry& k, ComponentRegistry& c) {
    k.put_all(std::move(m_kernels));
    c.put_all(std::move(m_components));
    m_kernels.clear();
    m_components.clear();
}

} // namespace switchyard
