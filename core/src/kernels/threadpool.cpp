// SPDX-License-Identifier: MIT
#include "kernels/threadpool.h"

#include "hardware/affinity.h"

#include <switchyard/hardware/hardware.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>

namespace switchyard {

unsigned ThreadPool::available_cpus() {
    return cpus_in_affinity_mask();
}

namespace {
thread_local unsigned t_worker_index = 0;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Polls `done` for up to `limit`; true when it came true. The first polls only pause; past
// kPausing each poll also yields the CPU, so on a machine with more runnable threads than
// CPUs (ctest -j2 on two cores, another process's threaded kernel) a polling thread gives
// its time slice to them instead of burning it. Yielding costs a system call, which is
// nothing against the wake-up it still saves when the CPU is idle.
constexpr std::chrono::microseconds kPausing{20};
template <class Done> bool spin_until(Done done, std::chrono::microseconds limit) {
    const auto start = std::chrono::steady_clock::now();
    const auto pausing = start + std::min(limit, kPausing), end = start + limit;
    for (unsigned i = 1;; ++i) {
        if (done())
            return true;
        cpu_relax();
        if (i % 64 == 0 && std::chrono::steady_clock::now() >= pausing)
            break;
    }
    while (true) {
        if (done())
            return true;
        if (std::chrono::steady_clock::now() >= end)
            return false;
        sched_yield();
    }
}
} // namespace

unsigned ThreadPool::worker_index() noexcept {
    return t_worker_index;
}

ThreadPool& ThreadPool::instance() {
    static ThreadPool pool(available_cpus());
    return pool;
}

ThreadPool::ThreadPool(unsigned threads) {
    for (unsigned i = 1; i < threads; ++i)
        m_workers.emplace_back([this, i] {
            t_worker_index = i;
            // A pool first used inside a pinned 1-thread measurement would otherwise start
            // every worker on that one CPU (a new thread inherits its creator's mask).
            detail::allow_process_cpus();
            worker_loop();
        });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (auto& t : m_workers)
        t.join();
}

void ThreadPool::run_tasks() {
    // Claims tasks one at a time under the lock: tasks are coarse (one per thread or a
    // few), so the lock is not contended.
    while (true) {
        std::int64_t i;
        const std::function<void(std::int64_t)>* task;
        {
            std::lock_guard lock(m_mutex);
            if (m_next >= m_count)
                return;
            i = m_next++;
            task = m_task;
        }
        (*task)(i);
        bool last;
        {
            std::lock_guard lock(m_mutex);
            last = m_finished.fetch_add(1, std::memory_order_acq_rel) + 1 == m_count;
        }
        if (last)
            m_done.notify_all();
    }
}

void ThreadPool::worker_loop() {
    std::uint64_t seen = 0;
    while (true) {
        spin_until([&] { return m_generation.load(std::memory_order_acquire) != seen; }, kSpin);
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stop || m_generation != seen; });
            if (m_stop)
                return;
            seen = m_generation.load(std::memory_order_relaxed);
        }
        run_tasks();
    }
}

void ThreadPool::parallel_for(std::int64_t n, const std::function<void(std::int64_t)>& task) {
    if (n <= 0)
        return;
    if (n == 1 || m_workers.empty()) {
        for (std::int64_t i = 0; i < n; ++i)
            task(i);
        return;
    }
    std::lock_guard call(m_call_mutex);
    {
        std::lock_guard lock(m_mutex);
        m_task = &task;
        m_count = n;
        m_next = 0;
        m_finished.store(0, std::memory_order_relaxed);
        m_generation.fetch_add(1, std::memory_order_release);
    }
    m_wake.notify_all();
    run_tasks();
    spin_until([&] { return m_finished.load(std::memory_order_acquire) == n; }, kSpin);
    std::unique_lock lock(m_mutex);
    m_done.wait(lock, [&] { return m_finished.load(std::memory_order_relaxed) == m_count; });
    m_task = nullptr;
}

void ThreadPool::parallel_together(std::int64_t n, const std::function<void(std::int64_t)>& task) {
    if (n > std::int64_t(size()))
        throw std::invalid_argument("ThreadPool::parallel_together: " + std::to_string(n) +
                                    " tasks, but the pool has " + std::to_string(size()) +
                                    " threads");
    std::atomic<std::int64_t> started{0};
    parallel_for(n, [&](std::int64_t i) {
        // A task holds its thread until all have begun, so no thread takes a second one.
        started.fetch_add(1, std::memory_order_acq_rel);
        while (started.load(std::memory_order_acquire) < n)
            cpu_relax();
        task(i);
    });
}

} // namespace switchyard
