// SPDX-License-Identifier: MIT
#include <switchyard/worker/abcontroller.h>

#include <switchyard/hardware/hardware.h>
#include <switchyard/kernels/cpudevice.h>
#include <switchyard/profiling/fingerprint.h>
#include <switchyard/profiling/profiler.h>
#include <switchyard/report/runcontext.h>
#include <switchyard/tuning/tunedresolve.h>
#include <switchyard/worker/workercontroller.h>

#include "util/splitmix.h"
#include "worker/workerprocess.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <istream>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string_view>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace switchyard {

namespace {

// Runs `fn` with the stack at the same offset within its page in every process given the
// same seed: the row's frames (its kernel arguments, the launch loop's state) then sit at
// the same page offsets on both sides of a pair, as its buffers do. A process's stack starts
// at a random offset (ASLR), and 4 KiB aliasing between a frame and a row's arrays moved one
// worker's small rows 1-3 % from the other's for a whole run.
void on_stack_at(std::int64_t seed, const std::function<void()>& fn) {
    if (seed == 0) {
        fn();
        return;
    }
    std::uint64_t s = std::uint64_t(seed) ^ 0x57ac4ULL;
    const std::size_t want = std::size_t(splitmix64(s) % 64) * 64; // the page offset wanted
    const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    const std::size_t pad = (here - want) % 4096 + 64; // the stack grows down
    auto* gap = static_cast<volatile char*>(__builtin_alloca(pad));
    gap[0] = 0; // keeps the allocation
    fn();
}

// A side's row in lockstep (SliceCommand::chunk_s): the Profiler's sample hook. After each
// chunk of about `chunk_s` seconds of samples, a Turn with the chunk's median; then, unless
// the row's budget is spent, the controller's next command on `commands`, the time waited
// for it given back to the row's budget.
struct Lockstep {
    std::int64_t index;
    double chunk_s;
    std::istream& commands;
    int fd;
    std::chrono::steady_clock::time_point chunk_start;
    std::size_t from = 0; // the chunk's first sample
    std::string error;    // a command it could not take: the row ends there

    Lockstep(std::int64_t i, double chunk, std::istream& in, int out)
        : index(i), chunk_s(chunk), commands(in), fd(out) {}

    bool after_sample(const std::vector<double>& samples, bool last, double& waited) {
        using std::chrono::steady_clock;
        const auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
        if (samples.size() == 1) // the first turn is timed from its first sample, not the setup
            chunk_start = steady_clock::now();
        if (!last && seconds(steady_clock::now() - chunk_start) < chunk_s)
            return true;
        const std::span<const double> chunk(samples.data() + from, samples.size() - from);
        from = samples.size();
        detail::emit_line(fd, protocol::turn_message(index, SampleStats::from(chunk).median,
                                                     std::int64_t(chunk.size()), last));
        if (last)
            return true;
        const auto asked = steady_clock::now();
        bool go = false;
        std::string line;
        while (error.empty() && std::getline(commands, line)) {
            if (line.empty())
                continue;
            try {
                go = protocol::turn_command_from_json(nlohmann::json::parse(line));
            } catch (const std::exception& e) {
                error = e.what();
            }
            break;
        }
        if (error.empty() && !commands)
            error = "its input ended while it waited for its turn";
        chunk_start = steady_clock::now();
        waited = seconds(chunk_start - asked);
        return go && error.empty();
    }
};

} // namespace

int run_slice_worker(const protocol::ProfileRequest& request, std::istream& commands, int fd,
                     BackendRegistry& backends, DeviceRegistry& devices) {
    try {
        const ProfileSettings& settings = request.settings;
        const auto cpu = find_cpu_device(devices);
        if (cpu && request.peaks)
            cpu->set_peaks(*request.peaks);
        if (cpu && request.shared_buffers) {
            if (fcntl(detail::kWorkerSharedFd, F_GETFD) < 0) {
                detail::emit_line(fd, protocol::fatal_message(
                                          "worker: asked for shared buffers, but descriptor " +
                                          std::to_string(detail::kWorkerSharedFd) +
                                          " is not open (start it through AbController)"));
                return 1;
            }
            cpu->place_in_shared_file(detail::kWorkerSharedFd, std::uintptr_t(request.shared_at));
        }
        Profiler profiler(settings, backends, devices);
        profiler.set_parity_once(true); // each row runs 2 x pairs slices of the same code
        if (!request.ceiling_cache.empty())
            profiler.set_ceiling_cache(CeilingCache(request.ceiling_cache), request.ceiling_policy);
        const auto tuning_ignored = follow_tunings(profiler, backends);
        std::vector<RowSpec> plan;
        RunContext context;
        std::optional<CpuPeaks> peaks_now;
        {
            std::int64_t steps = 0;
            const PrepareStepScope heartbeat([&](const std::string& step) {
                detail::emit_line(fd,
                                  protocol::progress_message(-1, "preparing: " + step, ++steps));
            });
            try {
                announce_prepare_step("planning");
                plan = profiler.plan();
            } catch (const std::invalid_argument& e) {
                detail::emit_line(fd, protocol::fatal_message(e.what(), true));
                return 2;
            }
            context = run_context(profiler);
            if (cpu && request.shared_at != 0 && cpu->shared_at() != request.shared_at)
                context.warnings.push_back(
                    "the shared buffers could not be mapped at the address both sides use (it "
                    "was taken in this worker): the sides' buffers have other virtual addresses, "
                    "which moved some rows 1-1.5 % apart");
            for (const auto& why : *tuning_ignored)
                context.warnings.push_back("tuning ignored: " + why);
            peaks_now = profiler.cpu_peaks();
        }
        detail::emit_line(fd,
                          protocol::context_message(&context, peaks_now ? &*peaks_now : nullptr));
        detail::emit_line(fd, protocol::plan_message(plan));
        std::string line;
        while (std::getline(commands, line)) {
            if (line.empty())
                continue;
            protocol::SliceCommand c;
            try {
                c = protocol::slice_command_from_json(nlohmann::json::parse(line));
                if (c.index >= std::int64_t(plan.size()))
                    throw std::runtime_error("slice.index: row " + std::to_string(c.index) +
                                             " is past the plan's " + std::to_string(plan.size()));
            } catch (const std::exception& e) {
                detail::emit_line(fd, protocol::fatal_message(
                                          std::string("worker: bad command: ") + e.what(), true));
                return 2;
            }
            profiler.use_settings(settings.paired_slice_settings(c.slices, c.first));
            if (cpu)
                cpu->vary_placement(std::uint64_t(c.placement));
            const auto i = c.index;
            // Lockstep: a Turn after each chunk of samples, then wait for the controller.
            std::optional<Lockstep> lockstep;
            if (c.chunk_s > 0) {
                lockstep.emplace(i, c.chunk_s, commands, fd);
                profiler.set_sample_hook(
                    [&](const std::vector<double>& samples, bool last, double& waited) {
                        return lockstep->after_sample(samples, last, waited);
                    });
            }
            detail::emit_line(fd, protocol::row_start_message(i));
            ProfileRow row;
            on_stack_at(c.placement, [&] {
                row = profiler.run_row(
                    plan[std::size_t(i)], [&](const std::string& phase, std::int64_t n) {
                        detail::emit_line(fd, protocol::progress_message(i, phase, n));
                    });
            });
            profiler.set_sample_hook({});
            if (lockstep && !lockstep->error.empty()) {
                detail::emit_line(fd,
                                  protocol::fatal_message(
                                      "worker: bad command in lockstep: " + lockstep->error, true));
                return 2;
            }
            detail::emit_line(fd, protocol::row_message(row));
        }
        detail::emit_line(fd, protocol::done_message());
        return 0;
    } catch (const std::exception& e) {
        detail::emit_line(fd, protocol::fatal_message(std::string("worker: ") + e.what()));
        return 1;
    }
}

// One side's worker: started, told slices one at a time, started again after it dies.
struct AbController::Side {
    char name = 'A';
    AbSide side;
    const Options& options;
    std::atomic<bool>& cancel;
    std::atomic<int>& pid;
    const Callbacks& cb;
    int shared_fd = -1;          // the memory file both sides cut their CPU buffers from; -1: none
    std::uint64_t shared_at = 0; // where both sides map it

    std::unique_ptr<detail::WorkerProcess> process;
    std::optional<RunContext> context; // of its first worker
    std::optional<CpuPeaks> peaks;     // what its first worker sent
    std::vector<RowSpec> plan;
    bool have_plan = false;
    std::optional<ProfileRow> reply;
    struct Turn {
        double median = 0;
        bool last = false;
    };
    std::optional<Turn> turn; // the chunk the worker just ended (lockstep)
    std::string fatal, err_tail, phase;
    bool fatal_usage = false;

    Side(char n, AbSide s, const Options& o, std::atomic<bool>& c, std::atomic<int>& p,
         const Callbacks& callbacks)
        : name(n), side(std::move(s)), options(o), cancel(c), pid(p), cb(callbacks) {}

    std::string who() const { return std::string("side ") + name + " (" + side.describe() + ")"; }

    void on_line(const std::string& line) {
        if (line.empty())
            return;
        try {
            const auto m = protocol::parse(nlohmann::json::parse(line));
            if (!m)
                return;
            using protocol::Event;
            switch (m->event) {
            case Event::Context:
                if (m->context && !context)
                    context = m->context;
                if (m->peaks && !peaks)
                    peaks = m->peaks;
                break;
            case Event::Plan:
                if (!have_plan) {
                    plan = m->plan;
                    have_plan = true;
                }
                break;
            case Event::Progress:
                phase = m->phase;
                break;
            case Event::Row:
                reply = m->row;
                break;
            case Event::Turn:
                turn = Turn{m->median, m->last};
                break;
            case Event::Fatal:
                fatal = m->message;
                fatal_usage = m->usage;
                break;
            default:
                break;
            }
        } catch (const std::exception& e) {
            if (cb.on_worker_stderr)
                cb.on_worker_stderr(name, std::string("(bad worker message) ") + e.what());
        }
    }
    void on_err(const std::string& line) {
        if (cb.on_worker_stderr)
            cb.on_worker_stderr(name, line);
        err_tail += line + "\n";
        if (err_tail.size() > 2048)
            err_tail.erase(0, err_tail.size() - 2048);
    }
    detail::WorkerEnd wait(double limit_s, const std::function<bool()>& until) {
        return process->run([limit_s] { return limit_s; },
                            [this](const std::string& l) { on_line(l); },
                            [this](const std::string& l) { on_err(l); }, cancel, until);
    }

    // Starts the worker and waits for its plan. Throws WorkerError (WorkerUsageError for
    // bad settings) when it cannot get that far.
    void start(const std::optional<CpuPeaks>& given) {
        std::vector<std::pair<std::string, std::string>> env = options.environment;
        if (!side.plugin_dir.empty())
            env.emplace_back("SWITCHYARD_PLUGIN_PATH", side.plugin_dir);
        if (!side.tuning.empty() && side.tuning != AbSide::kNoTuning)
            env.emplace_back("SWITCHYARD_TUNING", side.tuning);
        protocol::ProfileRequest request;
        request.settings = options.settings;
        // No memory beside the DRAM rows: it says what the machine's memory did around one
        // profile's samples, not which side is faster, and its probe's working set cost each
        // side's first slice of a DRAM row over a second (a fifth of an A/B run's time).
        request.settings.memory_beside = false;
        // Row i of one side is paired with row i of the other: a tuning that picked the CPU
        // reference must not fold its row into the reference row.
        request.settings.resolved_apart = true;
        request.settings.use_tuning =
            options.settings.use_tuning && side.tuning != AbSide::kNoTuning;
        request.peaks = given;
        request.shared_buffers = shared_fd >= 0;
        request.shared_at = shared_at;
        if (options.ceiling_cache) { // the devices' figures, kept between runs
            request.ceiling_cache = options.ceiling_cache->folder();
            request.ceiling_policy = options.ceiling_policy;
        }
        process = std::make_unique<detail::WorkerProcess>(
            std::vector<std::string>{options.executable, "__worker", "slices"},
            detail::worker_environment(env), protocol::to_json(request).dump() + "\n", true,
            shared_fd);
        pid = process->pid();
        have_plan = false;
        fatal.clear();
        err_tail.clear();
        phase.clear();
        const double silence = std::max(options.settings.row_timeout_s, options.startup_timeout_s);
        const auto end = wait(silence, [this] { return have_plan || !fatal.empty(); });
        if (!fatal.empty()) {
            stop();
            if (fatal_usage)
                throw WorkerUsageError(who() + ": " + fatal);
            throw WorkerError(who() + ": " + fatal);
        }
        if (!end.paused) {
            process.reset();
            pid = 0;
            if (cancel)
                return;
            throw WorkerError(
                who() + ": its worker failed before planning (" +
                (end.timed_out ? "silent too long" : describe_wait_status(end.status)) +
                (phase.empty() ? "" : ", at " + phase) + ")" +
                (err_tail.empty() ? "" : "; worker stderr: " + err_tail));
        }
    }
    void stop() {
        if (!process)
            return;
        process->close_input();
        process->run([] { return 5.0; }, [this](const std::string& l) { on_line(l); },
                     [this](const std::string& l) { on_err(l); }, cancel);
        process.reset();
        pid = 0;
    }

    // Lockstep (SliceCommand::chunk_s): starts row `spec` and returns after its first chunk
    // (true, in `turn`) or its row (false, in `done`: also a crashed, hung or cancelled one).
    // A worker that died is started again here.
    bool begin(const RowSpec& spec, std::int64_t placement, double chunk_s,
               const std::optional<CpuPeaks>& run_peaks) {
        if (!process)
            start(run_peaks);
        current = spec;
        if (!process) // cancelled
            return failed_row("cancelled", RowStatus::Error);
        return exchange(
            protocol::to_json(protocol::SliceCommand{spec.index, 1, true, placement, chunk_s})
                .dump() +
            "\n");
    }
    // After a turn that was not the last: its next chunk (`go`) or the end of its sampling
    // now; returns as begin() does.
    bool resume(bool go) { return exchange(protocol::turn_command(go).dump() + "\n"); }
    // After its last turn: waits for the row.
    void finish() {
        if (reply) {
            done = *reply;
            return;
        }
        turn.reset();
        (void)await();
    }

    RowSpec current;
    ProfileRow done; // the row, once begin(), resume() or finish() returned it

private:
    bool failed_row(const std::string& reason, RowStatus status) {
        done = ProfileRow{};
        done.spec = current;
        done.status = status;
        done.reason = reason;
        return false;
    }
    bool exchange(const std::string& command) {
        reply.reset();
        turn.reset();
        phase.clear();
        if (!process->send(command)) {
            const std::string why = fatal.empty() ? "its worker took no command" : fatal;
            process.reset();
            pid = 0;
            return failed_row(who() + ": " + why, RowStatus::Crashed);
        }
        return await();
    }
    bool await() {
        const auto end = wait(options.settings.row_timeout_s, [this] {
            return turn.has_value() || reply.has_value() || !fatal.empty();
        });
        if (end.paused && turn)
            return true;
        if (end.paused && reply) {
            done = *reply;
            return false;
        }
        if (end.paused) { // a fatal message: it cannot go on
            const std::string why = fatal;
            stop();
            return failed_row(who() + ": " + why, RowStatus::Crashed);
        }
        const std::string where = " (phase: " + (phase.empty() ? "start" : phase) + ")";
        process.reset();
        pid = 0;
        if (end.timed_out)
            return failed_row(who() + ": no progress for " +
                                  std::to_string(options.settings.row_timeout_s) + " s" + where +
                                  "; the worker was killed",
                              RowStatus::TimedOut);
        if (end.cancelled || cancel)
            return failed_row("cancelled", RowStatus::Error);
        return failed_row(who() + ": the worker died with " + describe_wait_status(end.status) +
                              where + (err_tail.empty() ? "" : "; worker stderr: " + err_tail),
                          RowStatus::Crashed);
    }
};

AbController::AbController(Options options) : m_options(std::move(options)) {}

void AbController::cancel() noexcept {
    m_cancel = true;
    detail::WorkerProcess::stop(m_pid_a.load());
    detail::WorkerProcess::stop(m_pid_b.load());
}

AbReport AbController::run(const Callbacks& cb) {
    if (m_options.pairs < 1)
        throw WorkerUsageError("pairs: expected at least 1");
    // The CPU ceilings both sides share: given, cached, or measured by side A's worker.
    CeilingSetChoice ceilings;
    if (m_options.cpu_peaks) {
        ceilings.peaks = m_options.cpu_peaks;
        ceilings.set = m_options.ceiling_set.is_null()
                           ? nlohmann::json{{"source", "given"},
                                            {"id", fingerprint_id(m_options.cpu_peaks->to_json())}}
                           : m_options.ceiling_set;
    } else if (m_options.ceiling_cache) {
        ceilings = m_options.ceiling_cache->choose(m_options.ceiling_policy,
                                                   std::int64_t(std::time(nullptr)));
    } else {
        ceilings = uncached_ceiling_choice("no cache of ceilings in use");
    }
    // Each row's CPU buffers at offsets drawn afresh (CpuDevice::vary_placement), the same
    // for both sides: where a row's arrays sit within their pages (4 KiB aliasing, cache sets)
    // moved one worker's small rows 2-5 % from the other's, for the whole run, and a paired
    // test reads a gap that steady as a difference. And on the same physical pages:
    // both sides cut their buffers from one memory file (CpuDevice::place_in_shared_file), so
    // the host's pages under them, which set a row's mode on a virtual machine, are the pair's
    // too. SWITCHYARD_PLACEMENT=apart: drawn offsets, each side on pages of its own; fixed:
    // where each worker's heap puts them (to see what placement does to a row).
    const char* placement_env = std::getenv("SWITCHYARD_PLACEMENT");
    const std::string_view placement_mode = placement_env ? placement_env : "";
    const bool fixed_placement = placement_mode == "fixed";
    const bool apart = fixed_placement || placement_mode == "apart";
    if (!placement_mode.empty() && !apart && placement_mode != "shared")
        throw WorkerUsageError("SWITCHYARD_PLACEMENT is '" + std::string(placement_mode) +
                               "': expected shared (the default), apart or fixed");
    struct FileCloser {
        int fd = -1;
        ~FileCloser() {
            if (fd >= 0)
                ::close(fd);
        }
    } shared_file;
    if (!apart) {
        shared_file.fd = memfd_create("switchyard-ab-buffers", MFD_CLOEXEC);
        if (shared_file.fd < 0)
            throw WorkerError(std::string("cannot create the sides' shared buffer file "
                                          "(memfd_create): ") +
                              std::strerror(errno) + "; SWITCHYARD_PLACEMENT=apart runs without");
    }
    Side a('A', m_options.a, m_options, m_cancel, m_pid_a, cb);
    Side b('B', m_options.b, m_options, m_cancel, m_pid_b, cb);
    a.shared_fd = b.shared_fd = shared_file.fd;
    // The same virtual addresses too: a range far from where the loader and mmap put things
    // (32-64 TiB, 2 TiB steps), drawn per run.
    if (!apart) {
        std::uint64_t draw = std::random_device{}();
        a.shared_at = b.shared_at =
            (std::uint64_t(1) << 45) + (splitmix64(draw) % 16) * (std::uint64_t(1) << 41);
    }
    AbReport report;
    report.a = m_options.a;
    report.b = m_options.b;
    report.pairs = m_options.pairs;
    report.min_pairs = m_options.min_pairs < m_options.pairs ? m_options.min_pairs : 0;
    report.options = m_options.compare;
    a.start(ceilings.peaks);
    if (m_cancel)
        return report;
    std::optional<CpuPeaks> peaks = ceilings.peaks ? ceilings.peaks : a.peaks;
    if (!ceilings.peaks && peaks && ceilings.store && m_options.ceiling_cache) {
        try {
            m_options.ceiling_cache->record(ceilings, *peaks, std::int64_t(std::time(nullptr)));
        } catch (const std::exception& e) {
            ceilings.set["store_error"] = std::string("side A's ceilings: ") + e.what();
        }
    }
    b.start(peaks);
    if (m_cancel)
        return report;
    // The sides must plan the same rows (op, size, device, in order); their cells may differ
    // (a tuning picks another).
    const auto& plan = a.plan;
    bool same = a.plan.size() == b.plan.size();
    for (std::size_t i = 0; same && i < plan.size(); ++i)
        same = a.plan[i].op == b.plan[i].op && a.plan[i].size == b.plan[i].size &&
               a.plan[i].device == b.plan[i].device;
    if (!same) {
        a.stop();
        b.stop();
        throw WorkerUsageError(
            "the two sides planned different rows (A " + std::to_string(a.plan.size()) +
            " rows, B " + std::to_string(b.plan.size()) +
            "): each side must have the cells the selection names; select them with --op, "
            "--device and --cells so both sides have them");
    }
    if (a.context) {
        report.context = *a.context;
        report.context.ceiling_set = ceilings.set;
        report.context.settings = m_options.settings;
    }
    if (b.context) {
        report.context_b = *b.context;
        report.context_b.ceiling_set = ceilings.set;
        report.context_b.settings = m_options.settings;
    }
    if (cb.on_plan)
        cb.on_plan(plan);
    const auto pairs = m_options.pairs;
    if (fixed_placement)
        report.context.warnings.push_back(
            "SWITCHYARD_PLACEMENT=fixed: each side's CPU buffers sat where its worker's heap "
            "put them, so a placement one side kept is in its times");
    else if (!apart) {
        const auto huge = shared_memory_huge_pages();
        if (huge == "never" || huge == "deny")
            report.context.warnings.push_back(
                "the sides' CPU buffers shared the pages of one memory file, and this kernel "
                "backs shared memory with 4 KiB pages only (transparent_hugepage/shmem_enabled "
                "is " +
                huge +
                "): rows larger than the caches ran up to 1.5x slower than "
                "`profile` times them, alike on both sides, so the ratios hold; as root, echo "
                "advise > /sys/kernel/mm/transparent_hugepage/shmem_enabled gives them huge "
                "pages");
    }
    if (apart && !fixed_placement)
        report.context.warnings.push_back(
            "SWITCHYARD_PLACEMENT=apart: each side's CPU buffers sat on pages of its own, so "
            "the pages' own speed is in each pair's ratio");
    std::uint64_t placement_state = std::random_device{}();
    placement_state = (placement_state << 32) ^ std::uint64_t(std::time(nullptr));
    std::vector<PairedComparison> measured; // each finished row's own figures
    for (std::size_t i = 0; i < plan.size() && !m_cancel; ++i) {
        AbRow row;
        // Lockstep: both sides hold the row at once and take turns sampling it, a chunk each,
        // A B B A ..., each waiting (not counted in its budget) while the other samples. A
        // chunk is a pairs-th of the row's budget, at least kMinChunkS, at least one sample.
        const double chunk_s = std::max(
            kMinChunkS, m_options.settings.row_budget_s(plan[i].is_reference()) / double(pairs));
        // One placement a row, both sides at it: the same pages, the same offsets.
        const std::int64_t placement =
            fixed_placement ? 0 : std::int64_t((splitmix64(placement_state) >> 11) | 1);
        struct Track {
            Side& side;
            std::vector<double> chunks; // each chunk's median, in order
            bool waiting = false;       // at a turn, waiting for go or stop; else its row is done
        };
        Track ta{a, {}, false}, tb{b, {}, false};
        // After begin() or resume(): a turn (waiting for the next, unless it was the last, whose
        // row follows) or the row (side.done).
        const auto took = [&](Track& t, bool got_turn) {
            t.waiting = got_turn && !t.side.turn->last;
            if (got_turn)
                t.chunks.push_back(t.side.turn->median);
            if (got_turn && !t.waiting)
                t.side.finish();
        };
        // log(B / A) of each pair of turns so far.
        const auto log_ratios = [&] {
            std::vector<double> lr;
            for (std::size_t j = 0; j < std::min(ta.chunks.size(), tb.chunks.size()); ++j)
                if (ta.chunks[j] > 0 && tb.chunks[j] > 0)
                    lr.push_back(std::log(tb.chunks[j] / ta.chunks[j]));
            return lr;
        };
        for (Track* t : {&ta, &tb}) {
            if (cb.on_slice)
                cb.on_slice(std::int64_t(i), t->side.name, 0);
            took(*t, t->side.begin(t->side.plan[i], placement, chunk_s, peaks));
        }
        // Pair k: A then B when k is even, B then A when odd, so each side goes first as often
        // and the pair's two chunks are adjacent in time.
        // Settled SAME after an even number of pairs: the rest would cost, not decide. Asked
        // from min_pairs on, a few times (a bootstrap while both sides wait).
        const std::int64_t settle_step = std::max<std::int64_t>(2, m_options.min_pairs / 8 * 2);
        std::int64_t settle_at = m_options.min_pairs;
        for (std::int64_t k = 1; !m_cancel; ++k) {
            const auto n = std::min(ta.chunks.size(), tb.chunks.size());
            if (k % 2 == 0 && std::int64_t(n) >= settle_at) {
                settle_at = std::int64_t(n) + settle_step;
                if (settled_same(log_ratios(), m_options.compare.min_effect))
                    break;
            }
            bool ran = false;
            for (int turn = 0; turn < 2; ++turn) {
                Track& t = (k % 2 == 0) == (turn == 0) ? ta : tb;
                if (!t.waiting)
                    continue;
                if (cb.on_slice)
                    cb.on_slice(std::int64_t(i), t.side.name, k);
                took(t, t.side.resume(true));
                ran = true;
            }
            if (!ran || !ta.waiting || !tb.waiting)
                break; // a side's budget is spent (or it failed): no more pairs
        }
        for (Track* t : {&ta, &tb}) {
            if (t->waiting)
                took(*t, t->side.resume(false));
        }
        row.log_ratios = log_ratios();
        // A row that ended without a turn (its one run was its sample: ProfileRow's
        // reference_budget path) gives one pair, its two medians.
        if (ta.chunks.empty() && tb.chunks.empty() && a.done.measured() && b.done.measured() &&
            a.done.stats.median > 0 && b.done.stats.median > 0)
            row.log_ratios.push_back(std::log(b.done.stats.median / a.done.stats.median));
        std::vector<ProfileRow> runs_a{a.done}, runs_b{b.done};
        row.a = merge_runs(std::move(runs_a), m_options.settings.keep_samples);
        row.b = merge_runs(std::move(runs_b), m_options.settings.keep_samples);
        // Judged for the progress with the rows so far, as report.judge() judges them all
        // (identical code MACHINE, the machine gap of the identical rows so far, the
        // false-discovery control over those rows): a run once printed SLOWER 1.158 for the
        // CPU reference, then MACHINE in its report. Each row is measured once.
        measured.push_back(measure_paired(row.log_ratios, row.identical_code()));
        {
            auto so_far = measured;
            decide_paired(so_far, m_options.compare);
            row.result = so_far.back();
        }
        if (cb.on_row)
            cb.on_row(row);
        report.rows.push_back(std::move(row));
    }
    a.stop();
    b.stop();
    // Each side's speedups over its own reference rows.
    for (const bool side_a : {true, false}) {
        std::vector<ProfileRow> rows;
        for (const auto& r : report.rows)
            rows.push_back(side_a ? r.a : r.b);
        apply_reference_speedups(rows);
        for (std::size_t i = 0; i < rows.size(); ++i)
            (side_a ? report.rows[i].a : report.rows[i].b).reference_speedup =
                rows[i].reference_speedup;
    }
    // The run's rule over every row (report.judge() without measuring the rows again).
    decide_paired(measured, m_options.compare);
    for (std::size_t i = 0; i < report.rows.size(); ++i)
        report.rows[i].result = measured[i];
    return report;
}

} // namespace switchyard
