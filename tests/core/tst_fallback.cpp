// SPDX-License-Identifier: MIT
// Fallback chains: most specific arch the hardware supports down to generic,
// then the terminal rung (op, cpu, generic, reference); explained resolution.
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/fallback.h>
#include <switchyard/registry/resolution.h>
#include <switchyard/runtime/runtime.h>

#include <QTest>

#include <stdexcept>

using namespace switchyard;

namespace {
QStringList render(const std::vector<TupleKey>& chain) {
    QStringList out;
    for (const auto& k : chain)
        out << QString::fromStdString(k[1] + ":" + k[2] + ":" + k[3]);
    return out;
}
} // namespace

class TestFallback : public QObject {
    Q_OBJECT
private slots:
    void chains_data() {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QStringList>("expected");
        const QString ref = "cpu:generic:reference";
        QTest::newRow("cuda sm_100")
            << "cuda:sm_100"
            << "default" << QStringList{"cuda:sm_100:default",  "cuda:sm_90:default",
                                        "cuda:sm_89:default",   "cuda:sm_86:default",
                                        "cuda:sm_80:default",   "cuda:sm_75:default",
                                        "cuda:generic:default", ref};
        QTest::newRow("cuda sm_90") << "cuda:sm_90"
                                    << "default"
                                    << QStringList{"cuda:sm_90:default",
                                                   "cuda:sm_89:default",
                                                   "cuda:sm_86:default",
                                                   "cuda:sm_80:default",
                                                   "cuda:sm_75:default",
                                                   "cuda:generic:default",
                                                   ref};
        QTest::newRow("cuda sm_87 starts below it")
            << "cuda:sm_87"
            << "default"
            << QStringList{"cuda:sm_86:default", "cuda:sm_80:default", "cuda:sm_75:default",
                           "cuda:generic:default", ref};
        QTest::newRow("cuda sm_120 starts at sm_100")
            << "cuda:sm_120"
            << "v" << QStringList{"cuda:sm_100:v", "cuda:sm_90:v", "cuda:sm_89:v",   "cuda:sm_86:v",
                                  "cuda:sm_80:v",  "cuda:sm_75:v", "cuda:generic:v", ref};
        QTest::newRow("cuda sm_70 below the ladder")
            << "cuda:sm_70"
            << "default" << QStringList{"cuda:generic:default", ref};
        QTest::newRow("cuda generic") << "cuda:generic"
                                      << "default" << QStringList{"cuda:generic:default", ref};
        QTest::newRow("x86-64-v4")
            << "cpu:x86-64-v4"
            << "default"
            << QStringList{"cpu:x86-64-v4:default", "cpu:x86-64-v3:default",
                           "cpu:x86-64-v2:default", "cpu:generic:default", ref};
        QTest::newRow("x86-64-v2")
            << "cpu:x86-64-v2"
            << "default" << QStringList{"cpu:x86-64-v2:default", "cpu:generic:default", ref};
        QTest::newRow("aarch64 sve")
            << "cpu:sve"
            << "default"
            << QStringList{"cpu:sve:default", "cpu:neon:default", "cpu:generic:default", ref};
        QTest::newRow("opencl") << "opencl"
                                << "default" << QStringList{"opencl:generic:default", ref};
        QTest::newRow("vulkan") << "vulkan"
                                << "default" << QStringList{"vulkan:generic:default", ref};
        QTest::newRow("cpu reference is not repeated") << "cpu:generic"
                                                       << "reference" << QStringList{ref};
    }
    void chains() {
        QFETCH(QString, target);
        QFETCH(QString, variant);
        QFETCH(QStringList, expected);
        const auto chain =
            fallback_chain("gemm", parse_target(target.toStdString()), variant.toStdString());
        QCOMPARE(render(chain), expected);
        for (const auto& k : chain)
            QCOMPARE(k[0], std::string("gemm"));
    }

    void hostChainStartsAtHostLevel() {
        const std::string host = host_cpu_arch();
        const auto chain = fallback_chain("rms_norm", parse_target("cpu"));
        QCOMPARE(chain.front()[2], host);
        QCOMPARE(chain.back(), (TupleKey{"rms_norm", "cpu", "generic", "reference"}));
        const auto ladder = arch_ladder("cpu");
        QVERIFY(std::find(ladder.begin(), ladder.end(), host) != ladder.end());
    }

    void badTargets_data() {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown device")
            << "tpu"
            << "unknown device 'tpu'; known devices: cpu, cuda, opencl, vulkan";
        QTest::newRow("unknown cuda arch") << "cuda:ampere"
                                           << "unknown arch 'ampere' for device 'cuda'";
        QTest::newRow("cpu arch of cuda") << "cpu:sm_90"
                                          << "unknown arch 'sm_90' for device 'cpu'";
        QTest::newRow("opencl arch") << "opencl:sm_90"
                                     << "known arches: generic";
    }
    void badTargets() {
        QFETCH(QString, target);
        QFETCH(QString, message);
        try {
            parse_target(target.toStdString());
            QFAIL("must throw");
        } catch (const std::invalid_argument& e) {
            QVERIFY2(QString(e.what()).contains(message), e.what());
        }
    }

    void deviceIdMeansThisMachine() {
        const Target t = parse_target("cuda:0");
        QCOMPARE(t.device, std::string("cuda"));
        QVERIFY(t.arch.empty());
    }

    void hypotheticalTargetIsExplained() {
        KernelRegistry kernels("kernels", {"op", "device", "arch", "variant"});
        ComponentRegistry components("components", {"kind", "device", "variant"});
        BackendRegistry registry(kernels, components, builtin_backends);
        BackendSpec gpu;
        gpu.name = "fakecuda";
        gpu.register_cells = [](CellRegistrar& r) {
            r.add_kernel({"gemm",
                          "cuda",
                          "sm_80",
                          "default",
                          [](const KernelArgs&) {},
                          [] { return false; },
                          0,
                          {{"requires", "a CUDA device"}}});
        };
        registry.register_backend(gpu);
        const auto r = resolve_kernel(registry, "gemm", parse_target("cuda:sm_90"));
        QCOMPARE(r.rungs.size(), std::size_t{7});
        QVERIFY(r.winner);
        QCOMPARE(*r.winner, std::size_t{6});
        QCOMPARE(r.rungs[6].key, (TupleKey{"gemm", "cpu", "generic", "reference"}));
        QVERIFY(r.first_declared);
        QCOMPARE(*r.first_declared, std::size_t{3}); // sm_80: what an sm_90 machine would run
        QVERIFY(r.rungs[3].declared && !r.rungs[3].available);
        QVERIFY2(QString::fromStdString(r.rungs[3].why_not).contains("needs a CUDA device"),
                 r.rungs[3].why_not.c_str());
        QVERIFY(!r.rungs[0].declared);
        QCOMPARE(r.rungs[0].why_not, std::string("no backend declares this cell"));
        const auto j = to_json(r);
        QCOMPARE(j["winner"]["variant"].get<std::string>(), std::string("reference"));
        QCOMPARE(j["first_declared"]["arch"].get<std::string>(), std::string("sm_80"));
        QCOMPARE(j["rungs"].size(), std::size_t{7});
    }

    void unknownOpSuggests() {
        KernelRegistry kernels("kernels", {"op", "device", "arch", "variant"});
        ComponentRegistry components("components", {"kind", "device", "variant"});
        BackendRegistry registry(kernels, components, builtin_backends);
        try {
            resolve_kernel(registry, "gemn", parse_target("cpu"));
            QFAIL("must throw");
        } catch (const std::invalid_argument& e) {
            QVERIFY2(QString(e.what()).contains("did you mean: 'gemm'"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestFallback)
#include "tst_fallback.moc"
