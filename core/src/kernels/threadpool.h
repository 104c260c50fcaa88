// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace switchyard {

/// A fixed pool of worker threads for the threaded CPU variants: one per CPU this
/// process may run on. parallel_for() runs task(i) for i in [0, n), the calling thread
/// taking part, and returns when all are done. Calls are serialised.
///
/// Between calls a worker polls for the next one for kSpin (yielding its CPU to other
/// runnable threads after the first 20 us) before it sleeps on the
/// condition variable, and the caller polls for the last task's end as long before it
/// sleeps: a kernel launch makes one to three calls a few microseconds apart, and a futex
/// wake-up took longer than a whole in-cache launch (threaded flow_match_step 43690 ran
/// 1.4x slower than one thread).
class SWITCHYARD_CORE_EXPORT ThreadPool { // exported for tst_kernels
public:
    static ThreadPool& instance();

    explicit ThreadPool(unsigned threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    /// Workers plus the calling thread.
    unsigned size() const noexcept { return unsigned(m_workers.size()) + 1; }

    void parallel_for(std::int64_t n, const std::function<void(std::int64_t)>& task);

    /// The same, with every task on a thread of its own and all of them started together:
    /// each waits (spinning) until all n have begun. For measurements of n threads at once
    /// (the CPU probes): parallel_for hands tasks to whichever thread claims them, so a
    /// short task's caller can finish it and run the next before a worker wakes. n must not
    /// exceed size().
    void parallel_together(std::int64_t n, const std::function<void(std::int64_t)>& task);

    /// The calling thread's index in the pool: 1..size()-1 on its workers, 0 on any other
    /// thread (the one that calls parallel_for takes part as 0). Within one parallel_for the
    /// tasks running at the same time have different indices, so a task can pick per-thread
    /// scratch space by it.
    static unsigned worker_index() noexcept;

    /// CPUs in this process's affinity mask (at least 1).
    static unsigned available_cpus();

    /// How long a thread polls before it sleeps (see the class comment).
    static constexpr std::chrono::microseconds kSpin{200};

private:
    void worker_loop();
    void run_tasks();

    std::vector<std::thread> m_workers;
    std::mutex m_call_mutex; // serialises parallel_for
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_done;
    const std::function<void(std::int64_t)>* m_task = nullptr;
    std::int64_t m_count = 0;
    std::int64_t m_next = 0;
    std::atomic<std::int64_t> m_finished{0};    // written under m_mutex, polled without it
    std::atomic<std::uint64_t> m_generation{0}; // likewise
    bool m_stop = false;
};

} // namespace switchyard
