// SPDX-License-Identifier: MIT
// The inspection worker's protocol (worker/protocol.h): what one side encodes the
// other parses back to the same typed values, and what is malformed is an error that names
// the key, on either side of the pipe.
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/worker/inspect.h>
#include <switchyard/worker/protocol.h>

#include <QTest>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

using namespace switchyard;
using nlohmann::json;

namespace {

// What the encoder put on the wire, parsed as the other side reads it.
protocol::InspectMessage wire(const json& message) {
    const auto line = protocol::to_line(message);
    const auto parsed = protocol::parse_inspect(json::parse(line));
    if (!parsed)
        throw std::runtime_error("not an inspection message: " + line);
    return *parsed;
}

// The lines a worker wrote to a pipe.
std::vector<json> lines_of(int fd) {
    std::string all;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR);)
        if (n > 0)
            all.append(buf, std::size_t(n));
    std::vector<json> out;
    std::size_t start = 0;
    for (std::size_t nl; (nl = all.find('\n', start)) != std::string::npos; start = nl + 1)
        out.push_back(json::parse(all.substr(start, nl - start)));
    return out;
}

// A registry of its own that discovers the good fixture plugin (nothing loaded).
struct GoodFixtureRegistry {
    KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
    ComponentRegistry components{"components", {"kind", "device", "variant"}};
    BackendRegistry registry{kernels, components, builtin_backends};
    GoodFixtureRegistry() {
        registry.set_plugin_discovery(
            PluginSearchPath::from_dirs({SWITCHYARD_FIXTURE_DIR "/plugins/good"}).discovery());
        registry.ensure_initialized();
    }
};

} // namespace

class TestInspectProtocol : public QObject {
    Q_OBJECT
private slots:
    // Where a chain is resolved (the one rule of both front ends): gemm's default chain ends
    // at a built-in cell, so here; its "good" chain reaches the good fixture's cell first,
    // which would load that plugin, so in a worker. Deciding loads nothing; once the plugin
    // is loaded in this process, its cells resolve here too.
    void resolvePlaceFollowsTheChain() {
        GoodFixtureRegistry good;
        auto& registry = good.registry;
        const Target cpu = parse_target("cpu");
        QCOMPARE(int(resolve_place(registry, "gemm", cpu)), int(ResolvePlace::InProcess));
        QCOMPARE(int(resolve_place(registry, "gemm", cpu, "good")), int(ResolvePlace::Worker));
        QCOMPARE(int(registry.info("fixture-good").state), int(BackendState::Discovered));
        registry.load("fixture-good");
        QCOMPARE(int(resolve_place(registry, "gemm", cpu, "good")), int(ResolvePlace::InProcess));
        // Without a worker, a chain that needs one is an error that says so; the others
        // still resolve here.
        GoodFixtureRegistry other;
        auto& fresh = other.registry;
        InspectOptions none;
        none.executable.clear();
        const auto all = resolve_target(fresh, "cpu", none, "no worker here");
        QVERIFY(!all.used_worker);
        QVERIFY(!all.resolutions.empty());
        for (const auto& e : all.errors)
            QVERIFY2(e.find("no worker here") != std::string::npos, e.c_str());
        QVERIFY(
            std::is_sorted(all.resolutions.begin(), all.resolutions.end(),
                           [](const Resolution& a, const Resolution& b) { return a.op < b.op; }));
        QCOMPARE(int(fresh.info("fixture-good").state), int(BackendState::Discovered));
    }

    void requestRoundTrips() {
        protocol::InspectRequest r;
        r.load = {"a", "b"};
        r.failed = {{"c", BackendCause::HookTimedOut, "register hook did not return"}};
        r.plugin_dirs = {"/opt/plugins"};
        r.resolve = ResolveRequest{"gemm", "cuda:sm_80", "cublas"};
        r.resolve_all = {{"rms_norm", "cpu", "default"}, {"gemm", "opencl", "tiled"}};
        r.devices = true;
        r.probe = true;
        const auto back = protocol::inspect_request_from_json(json::parse(to_json(r).dump()));
        QCOMPARE(back.load, r.load);
        QCOMPARE(back.failed.size(), std::size_t(1));
        QCOMPARE(back.failed[0].backend, std::string("c"));
        QCOMPARE(back.failed[0].cause, BackendCause::HookTimedOut);
        QCOMPARE(back.failed[0].reason, r.failed[0].reason);
        QCOMPARE(back.plugin_dirs, r.plugin_dirs);
        QVERIFY(back.resolve);
        QCOMPARE(back.resolve->target, std::string("cuda:sm_80"));
        QCOMPARE(back.resolve->variant, std::string("cublas"));
        QCOMPARE(back.resolve_all.size(), std::size_t(2));
        QCOMPARE(back.resolve_all[1].variant, std::string("tiled"));
        QVERIFY(back.devices && back.probe);

        const auto plain = protocol::inspect_request_from_json(json::parse(R"({"load": []})"));
        QVERIFY(!plain.resolve && plain.resolve_all.empty() && !plain.devices);
    }

    void badRequestNamesTheKey_data() {
        QTest::addColumn<QByteArray>("request");
        QTest::addColumn<QString>("says");
        QTest::newRow("no load") << QByteArray(R"({})") << "load";
        QTest::newRow("unknown cause")
            << QByteArray(R"({"load": [], "failed": [{"name": "x", "cause": "nope"}]})")
            << "failed[0].cause: unknown backend cause 'nope'";
        QTest::newRow("op as number")
            << QByteArray(R"({"load": [], "resolve_all": [{"op": 3}]})") << "resolve_all[0].op";
    }
    void badRequestNamesTheKey() {
        QFETCH(QByteArray, request);
        QFETCH(QString, says);
        QString message;
        try {
            (void)protocol::inspect_request_from_json(json::parse(request.toStdString()));
        } catch (const std::exception& e) {
            message = QString::fromUtf8(e.what());
        }
        QVERIFY2(message.contains(says), qPrintable(message));
    }

    void everyMessageRoundTrips() {
        QCOMPARE(wire(protocol::loading_message("fx")).backend, std::string("fx"));
        QCOMPARE(wire(protocol::loading_message("fx")).event, protocol::InspectEvent::Loading);

        protocol::InspectedBackend b;
        b.state = BackendState::Failed;
        b.cause = BackendCause::RegisterHookThrew;
        b.error = "its register hook threw: boom";
        b.diagnostics = {"manifest declares kernels the library did not register: (x)"};
        b.device_kinds = {"opencl"};
        b.load_error = "Cannot load fx: boom";
        const auto backend = wire(protocol::backend_message("fx", b));
        QCOMPARE(backend.event, protocol::InspectEvent::Backend);
        QCOMPARE(backend.backend, std::string("fx"));
        QCOMPARE(backend.info.state, BackendState::Failed);
        QCOMPARE(backend.info.cause, BackendCause::RegisterHookThrew);
        QCOMPARE(backend.info.error, b.error);
        QCOMPARE(backend.info.diagnostics, b.diagnostics);
        QCOMPARE(backend.info.device_kinds, b.device_kinds);
        QCOMPARE(backend.info.load_error, b.load_error);

        Resolution r;
        r.op = "gemm";
        r.target = Target{"cpu", "x86-64-v2"};
        r.variant = "default";
        ResolutionRung missing;
        missing.key = TupleKey{"gemm", "cpu", "x86-64-v2", "default"};
        missing.why_not = "no backend declares this cell";
        ResolutionRung ref;
        ref.key = TupleKey{"gemm", "cpu", "generic", "reference"};
        ref.declared = ref.available = true;
        ref.backend = "cpu";
        r.rungs = {missing, ref};
        r.winner = 1;
        r.first_declared = 1;
        const auto resolution = wire(protocol::resolution_message(r)).resolution;
        QCOMPARE(resolution.op, r.op);
        QCOMPARE(resolution.target.arch, r.target.arch);
        QCOMPARE(resolution.rungs.size(), std::size_t(2));
        QCOMPARE(resolution.rungs[0].why_not, missing.why_not);
        QCOMPARE(resolution.rungs[1].backend, std::string("cpu"));
        QVERIFY(resolution.winner == r.winner);
        QVERIFY(resolution.first_declared == r.first_declared);
        QCOMPARE(to_json(resolution).dump(), to_json(r).dump()); // what `resolve --json` prints

        const auto error = wire(protocol::resolution_error_message("late_op", "unknown op"));
        QCOMPARE(error.op, std::string("late_op"));
        QCOMPARE(error.message, std::string("unknown op"));
        QCOMPARE(wire(protocol::listing_message("opencl")).kind, std::string("opencl"));
        const auto probing = wire(protocol::probing_message("opencl", "opencl:1"));
        QCOMPARE(probing.kind, std::string("opencl"));
        QCOMPARE(probing.device, std::string("opencl:1"));

        DeviceInfo d;
        d.id = "fx:0";
        d.kind = "fx";
        d.name = "Fixture GPU";
        d.peak_gflops = 1234;
        const auto devices = wire(protocol::devices_message({d})).devices;
        QCOMPARE(devices.size(), std::size_t(1));
        QCOMPARE(devices[0].id, d.id);
        QCOMPARE(devices[0].name, d.name);
        QCOMPARE(devices[0].peak_gflops, d.peak_gflops);

        // A provider that failed says why, and so does a device that cannot be read.
        auto listed = protocol::devices_message({d}, {{"cuda", "cudaErrorOperatingSystem"}});
        listed["devices"].push_back({{"id", 7}});
        const auto failed = wire(listed);
        QCOMPARE(failed.devices.size(), std::size_t(1));
        QCOMPARE(failed.listing_errors.size(), std::size_t(2));
        QCOMPARE(failed.listing_errors[0].first, std::string("?"));
        QVERIFY(
            failed.listing_errors[0].second.starts_with("a device it listed could not be read"));
        QCOMPARE(failed.listing_errors[1],
                 std::make_pair(std::string("cuda"), std::string("cudaErrorOperatingSystem")));

        const auto fatal = wire(protocol::fatal_message("bad request", true));
        QCOMPARE(fatal.event, protocol::InspectEvent::Fatal);
        QCOMPARE(fatal.message, std::string("bad request"));
        QVERIFY(fatal.usage);
        QCOMPARE(wire(protocol::done_message()).event, protocol::InspectEvent::Done);
    }

    void malformedMessageNamesTheKey() {
        QVERIFY(!protocol::parse_inspect(json::parse(R"({"event": "row"})"))); // not inspection
        QVERIFY(!protocol::parse_inspect(json::parse(R"({"backend": "x"})")));
        QString message;
        try {
            (void)protocol::parse_inspect(json::parse(
                R"({"event": "backend", "backend": "x", "info": {"state": "asleep", "cause": "none"}})"));
        } catch (const std::exception& e) {
            message = QString::fromUtf8(e.what());
        }
        QVERIFY2(message.contains("info.state") && message.contains("asleep"), qPrintable(message));
    }

    // The worker side answers a request it cannot read with one fatal usage message.
    void workerRefusesABadRequest() {
        int fds[2];
        QCOMPARE(::pipe(fds), 0);
        KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
        ComponentRegistry components{"components", {"kind", "device", "variant"}};
        BackendRegistry registry{kernels, components};
        const int code = run_inspect_worker(json::parse(R"({"load": "fx"})"), fds[1], registry);
        ::close(fds[1]);
        const auto lines = lines_of(fds[0]);
        ::close(fds[0]);
        QCOMPARE(code, 2);
        QCOMPARE(lines.size(), std::size_t(1));
        const auto m = protocol::parse_inspect(lines[0]);
        QVERIFY(m && m->event == protocol::InspectEvent::Fatal && m->usage);
        QVERIFY2(m->message.find("load") != std::string::npos, m->message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestInspectProtocol)
#include "tst_inspectprotocol.moc"
