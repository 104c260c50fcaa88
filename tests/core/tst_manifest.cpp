// SPDX-License-Identifier: MIT
#include <switchyard/plugins/manifest.h>

#include <QtTest>

using namespace switchyard;

namespace {

const char* const kFull = R"json({"schema": 1, "name": "example", "version": "1.0.0",
  "description": "One line for the tooltip of the tree", "library": "libswitchyard-example.so",
  "tags": ["experimental"],
  "capabilities": {"contract_version": 1, "min_core_version": "0.1.0", "max_core_version": null,
    "optional_deps": [{"name": "libcuda.so.1", "kind": "library", "hint": "Install the NVIDIA driver (Debian: nvidia-driver)"}]},
  "kernels": [{"op": "gemm", "device": "cuda", "arch": "sm_90", "variant": "default", "workspace_bytes": 0}],
  "components": [{"kind": "vae", "device": "cuda", "variant": "default"}]})json";

// The minimal valid manifest, with `extra` spliced in before the closing brace.
QByteArray minimal(const QByteArray& extra = {}) {
    return R"({"schema": 1, "name": "m", "version": "0.1", "library": "libm-plugin.so")" +
           (extra.isEmpty() ? QByteArray() : ", " + extra) + "}";
}

} // namespace

class TestManifest : public QObject {
    Q_OBJECT
private slots:
    void parsesTheDocumentedExample() {
        const auto m = PluginManifest::parse(kFull);
        QVERIFY2(m.is_valid(), m.errors.empty() ? "" : m.errors.front().c_str());
        QCOMPARE(m.name, std::string("example"));
        QCOMPARE(m.version, std::string("1.0.0"));
        QCOMPARE(m.library, std::string("libswitchyard-example.so"));
        QCOMPARE(m.tags, std::vector<std::string>{"experimental"});
        QCOMPARE(m.capabilities.contract_version, 1);
        QCOMPARE(m.capabilities.min_core_version.value_or(""), std::string("0.1.0"));
        QVERIFY(!m.capabilities.max_core_version);
        QCOMPARE(m.capabilities.optional_deps.size(), std::size_t(1));
        QCOMPARE(m.capabilities.optional_deps[0].name, std::string("libcuda.so.1"));
        QCOMPARE(m.capabilities.optional_deps[0].kind, DependencyKind::Library);
        QVERIFY(m.capabilities.optional_deps[0].hint.find("nvidia-driver") != std::string::npos);
        QCOMPARE(m.kernels.size(), std::size_t(1));
        QCOMPARE(m.kernels[0].key, (std::vector<std::string>{"gemm", "cuda", "sm_90", "default"}));
        QCOMPARE(m.components.size(), std::size_t(1));
        QCOMPARE(m.components[0].key, (std::vector<std::string>{"vae", "cuda", "default"}));
        QVERIFY(m.extra.empty());
    }

    void defaultsOfOptionalKeys() {
        const auto m = PluginManifest::parse(std::string_view(
            minimal(R"("kernels": [{"op": "gemm", "device": "cpu", "arch": "generic"}])")
                .toStdString()));
        QVERIFY(m.is_valid());
        QCOMPARE(m.capabilities.contract_version, kContractVersion);
        QVERIFY(m.tags.empty());
        QCOMPARE(m.kernels.at(0).key.back(),
                 std::string("default")); // variant defaults to "default"
        QCOMPARE(m.kernels.at(0).workspace_bytes, std::int64_t(0));
    }

    void unknownKeysAreKeptNotRejected() {
        // (one line, no "//": moc misreads multi-line raw strings)
        const QByteArray extra =
            R"("homepage": "example.invalid", "capabilities": {"vendor": "acme"}, )"
            R"("kernels": [{"op": "gemm", "device": "cpu", "arch": "generic", "note": "fast"}])";
        const auto m = PluginManifest::parse(minimal(extra).toStdString());
        QVERIFY(m.is_valid());
        QCOMPARE(m.extra.value("homepage", ""), std::string("example.invalid"));
        QCOMPARE(m.extra.value("capabilities.vendor", ""), std::string("acme"));
        QCOMPARE(m.extra.value("kernels[0].note", ""), std::string("fast"));
        QCOMPARE(m.to_json().value("homepage", ""), std::string("example.invalid"));
    }

    // Well-formed cells take a one-pass path, the others the collecting one: mixed in one
    // manifest, every cell keeps its place, key, workspace and unknown keys, and each
    // problem names its own cell.
    void plainAndCheckedCellsMix() {
        // (one line per piece, no "//": moc misreads multi-line raw strings)
        const QByteArray extra =
            R"("kernels": [{"op": "a", "device": "cpu", "arch": "g"}, )"
            R"({"op": "b", "device": "cpu", "arch": "g", "variant": "v", "workspace_bytes": 8, "note": "x"}, )"
            R"({"workspace_bytes": 16, "variant": "w", "arch": "sm_90", "device": "cuda", "op": "c"}, )"
            R"({"op": "d", "device": "cpu", "arch": "g", "workspace_bytes": 1.5}, )"
            R"({"op": "e", "device": "cpu", "arch": "g", "workspace_bytes": 18446744073709551615}, )"
            R"({"op": "f", "device": 3, "arch": "g"}], )"
            R"("components": [{"kind": "vae", "device": "cpu"}, {"kind": "vae", "variant": "x"}])";
        const auto m = PluginManifest::parse(minimal(extra).toStdString());
        QCOMPARE(m.kernels.size(), std::size_t(6));
        QCOMPARE(m.kernels[0].key, (std::vector<std::string>{"a", "cpu", "g", "default"}));
        QCOMPARE(m.kernels[1].key, (std::vector<std::string>{"b", "cpu", "g", "v"}));
        QCOMPARE(m.kernels[1].workspace_bytes, std::int64_t(8));
        QCOMPARE(m.kernels[2].key, (std::vector<std::string>{"c", "cuda", "sm_90", "w"}));
        QCOMPARE(m.kernels[2].workspace_bytes, std::int64_t(16));
        QCOMPARE(m.kernels[5].key, (std::vector<std::string>{"f", "", "g", "default"}));
        QCOMPARE(m.extra.value("kernels[1].note", ""), std::string("x"));
        QCOMPARE(m.extra.size(), std::size_t(1));
        QCOMPARE(m.components.size(), std::size_t(2));
        QCOMPARE(m.components[0].key, (std::vector<std::string>{"vae", "cpu", "default"}));
        std::string errors;
        for (const auto& e : m.errors)
            errors += e + "\n";
        QCOMPARE(
            QString::fromStdString(errors),
            QStringLiteral("key 'kernels[3].workspace_bytes': expected an integer, got number\n"
                           "key 'kernels[4].workspace_bytes': must not be negative\n"
                           "key 'kernels[5].device': expected a string, got integer\n"
                           "key 'components[1].device' is missing (required)\n"));
    }

    void errorsNameTheKey_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("missing schema")
            << QByteArray(R"({"name": "m", "version": "1", "library": "l.so"})")
            << "key 'schema' is missing";
        QTest::newRow("missing name")
            << QByteArray(R"({"schema": 1, "version": "1", "library": "l.so"})")
            << "key 'name' is missing";
        QTest::newRow("missing version")
            << QByteArray(R"({"schema": 1, "name": "m", "library": "l.so"})")
            << "key 'version' is missing";
        QTest::newRow("missing library")
            << QByteArray(R"({"schema": 1, "name": "m", "version": "1"})")
            << "key 'library' is missing";
        QTest::newRow("schema as string")
            << QByteArray(R"({"schema": "1", "name": "m", "version": "1", "library": "l.so"})")
            << "key 'schema': expected an integer, got string";
        QTest::newRow("schema from the future")
            << QByteArray(R"({"schema": 2, "name": "m", "version": "1", "library": "l.so"})")
            << "key 'schema': revision 2 is newer";
        QTest::newRow("name as number")
            << QByteArray(R"({"schema": 1, "name": 5, "version": "1", "library": "l.so"})")
            << "key 'name': expected a string, got integer";
        QTest::newRow("name with a space")
            << QByteArray(R"({"schema": 1, "name": "a b", "version": "1", "library": "l.so"})")
            << "key 'name': 'a b' is not a valid backend name";
        QTest::newRow("library with a path") << minimal().replace("libm-plugin.so", "../evil.so")
                                             << "key 'library': must be a file name";
        QTest::newRow("tags as string") << minimal(R"("tags": "experimental")")
                                        << "key 'tags': expected an array of strings, got string";
        QTest::newRow("tag as number")
            << minimal(R"("tags": ["ok", 3])") << "key 'tags[1]': expected a string, got integer";
        QTest::newRow("capabilities as array")
            << minimal(R"("capabilities": [])")
            << "key 'capabilities': expected an object, got array";
        QTest::newRow("contract as string")
            << minimal(R"("capabilities": {"contract_version": "1"})")
            << "key 'capabilities.contract_version': expected an integer, got string";
        QTest::newRow("min core as number")
            << minimal(R"("capabilities": {"min_core_version": 1})")
            << "key 'capabilities.min_core_version': expected a version string or null";
        QTest::newRow("dep without kind")
            << minimal(R"("capabilities": {"optional_deps": [{"name": "x"}]})")
            << "key 'capabilities.optional_deps[0].kind' is missing";
        QTest::newRow("dep of unknown kind")
            << minimal(R"("capabilities": {"optional_deps": [{"name": "x", "kind": "pkg"}]})")
            << "key 'capabilities.optional_deps[0].kind': unknown dependency kind 'pkg'";
        QTest::newRow("kernels as object")
            << minimal(R"("kernels": {})") << "key 'kernels': expected an array of objects";
        QTest::newRow("kernel without arch")
            << minimal(R"("kernels": [{"op": "gemm", "device": "cpu"}])")
            << "key 'kernels[0].arch' is missing";
        QTest::newRow("negative workspace")
            << minimal(
                   R"("kernels": [{"op": "gemm", "device": "cpu", "arch": "g", "workspace_bytes": -1}])")
            << "key 'kernels[0].workspace_bytes': must not be negative";
        QTest::newRow("component variant as number")
            << minimal(R"("components": [{"kind": "vae", "device": "cpu", "variant": 1}])")
            << "key 'components[0].variant': expected a string, got integer";
        QTest::newRow("top level array")
            << QByteArray("[]") << "expected a JSON object at the top level, got array";
        QTest::newRow("invalid JSON")
            << QByteArray("{\n  \"schema\": 1,\n  \"name\": \"m\"\n  \"version\": \"1\"}")
            << "not valid JSON at line 4";
    }
    void errorsNameTheKey() {
        QFETCH(QByteArray, text);
        QFETCH(QString, expected);
        const auto m = PluginManifest::parse(text.toStdString());
        QVERIFY(!m.is_valid());
        QString all;
        for (const auto& e : m.errors)
            all += QString::fromStdString(e) + "\n";
        QVERIFY2(all.contains(expected), qPrintable(all));
    }

    void keepsTheNameOfAnInvalidManifest() {
        const auto m =
            PluginManifest::parse(std::string_view(minimal(R"("tags": 1)").toStdString()));
        QVERIFY(!m.is_valid());
        QCOMPARE(m.name, std::string("m"));
    }

    void readsFilesAndReportsUnreadableOnes() {
        const auto good =
            PluginManifest::read(SWITCHYARD_FIXTURE_DIR "/plugins/good/good.plugin.json");
        QVERIFY(good.is_valid());
        QCOMPARE(good.name, std::string("fixture-good"));
        QCOMPARE(good.extra.value("homepage", ""),
                 std::string("https://example.invalid/switchyard-fixture"));
        const auto missing = PluginManifest::read("/nonexistent/x.plugin.json");
        QVERIFY(!missing.is_valid());
        QVERIFY(missing.errors.front().find("cannot open") != std::string::npos);
        QVERIFY(missing.errors.front().find("No such file") != std::string::npos);
    }

    void manifestFileNames_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("manifest");
        QTest::newRow("manifest") << "cuda.plugin.json" << true;
        QTest::newRow("only the suffix") << ".plugin.json" << false;
        QTest::newRow("plain json") << "cuda.json" << false;
        QTest::newRow("backup") << "cuda.plugin.json~" << false;
        QTest::newRow("library") << "libswitchyard-cuda.so" << false;
    }
    void manifestFileNames() {
        QFETCH(QString, name);
        QFETCH(bool, manifest);
        QCOMPARE(is_manifest_file_name(name.toStdString()), manifest);
    }
};

QTEST_GUILESS_MAIN(TestManifest)
#include "tst_manifest.moc"
