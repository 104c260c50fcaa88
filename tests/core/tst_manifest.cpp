// SPDX-License-Identifier: MIT
#include <switchyard/plugins/manifest.h>
#include <switchyard/sdk/tuplekey.h>

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

    // "provides_devices": absent (an older manifest) is not the same as [] (no kinds).
    void providedDeviceKinds() {
        const auto absent = PluginManifest::parse(minimal().toStdString());
        QVERIFY(absent.is_valid());
        QVERIFY(!absent.provides_devices);
        const auto none = PluginManifest::parse(minimal(R"("provides_devices": [])").toStdString());
        QVERIFY(none.is_valid());
        QVERIFY(none.provides_devices && none.provides_devices->empty());
        const auto cuda =
            PluginManifest::parse(minimal(R"("provides_devices": ["cuda"])").toStdString());
        QVERIFY(cuda.is_valid());
        QCOMPARE(cuda.provides_devices.value_or(std::vector<std::string>{}),
                 std::vector<std::string>{"cuda"});
        QVERIFY(cuda.extra.empty()); // a known key, not kept as unknown
        QVERIFY(cuda.to_json().value("provides_devices", nlohmann::json()) ==
                nlohmann::json::array({"cuda"}));
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
        QTest::newRow("provided kinds as string")
            << minimal(R"("provides_devices": "cuda")")
            << "key 'provides_devices': expected an array of strings, got string";
        QTest::newRow("provides the cpu") << minimal(R"("provides_devices": ["cuda", "cpu"])")
                                          << "key 'provides_devices[1]': 'cpu' is built in";
        QTest::newRow("provides a device id")
            << minimal(R"("provides_devices": ["cuda:0"])")
            << "key 'provides_devices[0]': 'cuda:0' is not a device kind";
        QTest::newRow("provides an empty kind") << minimal(R"("provides_devices": [""])")
                                                << "key 'provides_devices[0]': a device kind "
                                                   "must not be empty";
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

    // The direct read of a well-formed manifest (no JSON DOM) gives exactly what the
    // collecting reader gives, and every manifest it does not read the common way (a
    // problem, an unknown or repeated key, an escape it leaves to the strict parser) is read
    // the collecting way, so its messages are that reader's.
    void directReadMatchesCollectingReader_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<bool>("valid");
        auto row = [](const char* name, const QByteArray& text, bool valid) {
            QTest::newRow(name) << text << valid;
        };
        row("documented example", kFull, true);
        row("minimal", minimal(), true);
        row("generated (scale.sh)",
            R"({"schema": 1, "name": "generated-0000", "version": "1.0.0",
              "description": "A generated plugin", "library": "libswitchyard-generated.so",
              "tags": ["generated", "experimental"],
              "capabilities": {"contract_version": 1, "min_core_version": "0.1.0",
                "max_core_version": null, "optional_deps": [{"name": "libc.so.6",
                "kind": "library", "hint": "Install libc6"}]},
              "kernels": [{"op": "op_000", "device": "cpu", "arch": "generic",
                "variant": "generated-0000", "workspace_bytes": 0},
                {"op": "op_001", "device": "cpu", "arch": "x86-64-v2", "workspace_bytes": 64},
                {"arch": "a", "device": "d", "op": "o"}],
              "components": [{"kind": "vae", "device": "cpu"}, {"device": "cpu", "kind": "t",
                "variant": "v"}]})",
            true);
        // Escapes and UTF-8, written as a plain string (moc misreads raw strings with escapes).
        row("escapes and UTF-8",
            minimal("\"description\": \"a\\\"b\\\\c\\nd\\te/ \\u00e9 \xC3\xA9 \xE2\x9C\x93\""),
            true);
        row("UTF-8", minimal("\"tags\": [\"\xC3\xA9\", \"\xF0\x9D\x84\x9E\"]"), true);
        row("empty lists", minimal(R"("tags": [], "kernels": [], "components": [],
            "capabilities": {"optional_deps": []})"),
            true);
        row("unknown key", minimal(R"("homepage": "x")"), true);
        row("unknown cell key",
            minimal(R"("kernels": [{"op": "a", "device": "cpu", "arch": "g", "note": 1}])"), true);
        row("unknown dependency key",
            minimal(R"("capabilities": {"optional_deps": [{"name": "a", "kind": "env",
                "vendor": "x"}]})"),
            true);
        row("duplicate key", minimal(R"("name": "n")"), false);
        row("duplicate cell key",
            minimal(R"("kernels": [{"op": "a", "op": "b", "device": "cpu", "arch": "g"}])"), false);
        row("schema 2", R"({"schema": 2, "name": "m", "version": "0.1", "library": "l.so"})",
            false);
        row("schema 0", R"({"schema": 0, "name": "m", "version": "0.1", "library": "l.so"})",
            false);
        row("schema 1.0", R"({"schema": 1.0, "name": "m", "version": "0.1", "library": "l.so"})",
            false);
        row("schema -1", R"({"schema": -1, "name": "m", "version": "0.1", "library": "l.so"})",
            false);
        row("no version", R"({"schema": 1, "name": "m", "library": "l.so"})", false);
        row("bad name", R"({"schema": 1, "name": "-m", "version": "0.1", "library": "l.so"})",
            false);
        row("library path", R"({"schema": 1, "name": "m", "version": "0.1", "library": "a/l.so"})",
            false);
        row("library ..", R"({"schema": 1, "name": "m", "version": "0.1", "library": ".."})",
            false);
        row("description null", minimal(R"("description": null)"), false);
        row("tag not a string", minimal(R"("tags": ["a", 1])"), false);
        row("contract 0", minimal(R"("capabilities": {"contract_version": 0})"), false);
        row("contract too big", minimal(R"("capabilities": {"contract_version": 1000001})"), false);
        row("core version bad", minimal(R"("capabilities": {"min_core_version": "one"})"), false);
        row("core version number", minimal(R"("capabilities": {"max_core_version": 1})"), false);
        row("dependency without kind",
            minimal(R"("capabilities": {"optional_deps": [{"name": "a"}]})"), false);
        row("dependency kind unknown",
            minimal(R"("capabilities": {"optional_deps": [{"name": "a", "kind": "x"}]})"), false);
        row("dependency name empty",
            minimal(R"("capabilities": {"optional_deps": [{"name": "", "kind": "env"}]})"), false);
        row("cell without arch", minimal(R"("kernels": [{"op": "a", "device": "cpu"}])"), false);
        row("negative workspace",
            minimal(
                R"("kernels": [{"op": "a", "device": "c", "arch": "g", "workspace_bytes": -1}])"),
            false);
        row("workspace over 63 bits", minimal(R"("kernels": [{"op": "a", "device": "c", "arch": "g",
                "workspace_bytes": 18446744073709551615}])"),
            false);
        row("workspace float",
            minimal(
                R"("kernels": [{"op": "a", "device": "c", "arch": "g", "workspace_bytes": 1e3}])"),
            false);
        row("component with workspace",
            minimal(R"("components": [{"kind": "a", "device": "c", "workspace_bytes": 1}])"), true);
        row("kernels not an array", minimal(R"("kernels": {})"), false);
        row("cell not an object", minimal(R"("kernels": ["gemm"])"), false);
        QByteArray many = R"("kernels": [)";
        for (int i = 0; i <= int(kMaxManifestCells); ++i)
            many += (i ? ", " : "") + QByteArray(R"({"op": "o", "device": "d", "arch": "a"})");
        row("too many cells", minimal(many + "]"), false);
        row("provided kinds", minimal(R"("provides_devices": ["cuda", "opencl"])"), true);
        row("no provided kinds", minimal(R"("provides_devices": [])"), true);
        row("provides the cpu", minimal(R"("provides_devices": ["cpu"])"), false);
        row("byte order mark", "\xEF\xBB\xBF" + minimal(), true);
        row("trailing text", minimal() + " x", false);
        row("trailing comma", R"({"schema": 1, "name": "m", "version": "0.1", "library": "l.so",})",
            false);
        row("not an object", "[]", false);
        row("empty", "", false);
        row("invalid UTF-8", minimal("\"description\": \"\xC3\x28\""), false);
    }
    void directReadMatchesCollectingReader() {
        QFETCH(QByteArray, text);
        QFETCH(bool, valid);
        const std::string_view view(text.constData(), std::size_t(text.size()));
        const auto direct = PluginManifest::parse(view);
        const auto general = detail::parse_manifest_general(view);
        QCOMPARE(direct.is_valid(), valid);
        QCOMPARE(direct.errors, general.errors);
        QCOMPARE(direct.schema, general.schema);
        QCOMPARE(direct.name, general.name);
        QCOMPARE(direct.version, general.version);
        QCOMPARE(direct.description, general.description);
        QCOMPARE(direct.library, general.library);
        QCOMPARE(direct.tags, general.tags);
        const auto& a = direct.capabilities;
        const auto& b = general.capabilities;
        QCOMPARE(a.contract_version, b.contract_version);
        QCOMPARE(a.min_core_version, b.min_core_version);
        QCOMPARE(a.max_core_version, b.max_core_version);
        QCOMPARE(a.optional_deps.size(), b.optional_deps.size());
        for (std::size_t i = 0; i < a.optional_deps.size(); ++i) {
            QCOMPARE(a.optional_deps[i].name, b.optional_deps[i].name);
            QCOMPARE(a.optional_deps[i].kind, b.optional_deps[i].kind);
            QCOMPARE(a.optional_deps[i].hint, b.optional_deps[i].hint);
        }
        QVERIFY(direct.kernels.cells() == general.kernels.cells());
        QVERIFY(direct.components.cells() == general.components.cells());
        for (std::size_t i = 0; i < direct.kernels.size(); ++i)
            QVERIFY(direct.kernels.key(i) == TupleKey(direct.kernels[i].key));
        QCOMPARE(direct.extra.dump(), general.extra.dump());
        QVERIFY(direct.provides_devices == general.provides_devices);
    }
};

QTEST_GUILESS_MAIN(TestManifest)
#include "tst_manifest.moc"
