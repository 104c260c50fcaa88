// SPDX-License-Identifier: MIT
// Files other people wrote: one bad manifest never hides the others, nothing
// hangs on a special file, writing a report never destroys anything.
#include <switchyard/diagnosis/elfdeps.h>
#include <switchyard/plugins/manifest.h>
#include <switchyard/plugins/pluginprovider.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/profiling/ops.h>
#include <switchyard/profiling/workload.h>
#include <switchyard/registry/backendinfoformat.h>
#include <switchyard/report/compare.h>
#include <switchyard/report/report.h>

#include "util/jsonread.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

using namespace switchyard;

namespace {

// The minimal valid manifest, with `extra` spliced in before the closing brace.
std::string minimal(const std::string& extra = {}, const std::string& name = "m") {
    return R"j({"schema": 1, "name": ")j" + name +
           R"j(", "version": "0.1", "library": "libm-plugin.so")j" +
           (extra.empty() ? std::string() : ", " + extra) + "}";
}

std::string nested(std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
}

bool write_file(const QString& path, const std::string& text) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    return f.write(text.data(), qint64(text.size())) == qint64(text.size());
}

std::string read_all(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll().toStdString();
}

ProfileRow row(const std::string& op, std::vector<double> samples) {
    ProfileRow r;
    r.spec.op = op;
    r.spec.size = "1024";
    r.spec.device = "cpu";
    r.spec.arch = "generic";
    r.spec.variant = "default";
    r.spec.backend = "cpu";
    r.status = *row_status_from_string("ok");
    r.samples = std::move(samples);
    r.stats = SampleStats::from(r.samples);
    return r;
}

Report report_of(std::vector<ProfileRow> rows) {
    Report r;
    r.rows = std::move(rows);
    return r;
}

// Loads `path` as a report; the error message, or "" when it loaded.
std::string load_error(const std::string& path) {
    try {
        (void)Report::load(path);
        return {};
    } catch (const ReportError& e) {
        return e.what();
    }
}

// A plugin folder `dir` holding a manifest for "t" and a library file.
bool make_plugin(const QString& dir, const QString& library_target = {}) {
    if (!QDir().mkpath(dir) || !write_file(dir + "/t.plugin.json", minimal({}, "t")))
        return false;
    if (library_target.isEmpty())
        return write_file(dir + "/libm-plugin.so", "not an ELF file");
    return ::symlink(library_target.toLocal8Bit().constData(),
                     (dir + "/libm-plugin.so").toLocal8Bit().constData()) == 0;
}

bool set_mode(const QString& path, mode_t mode) {
    return ::chmod(path.toLocal8Bit().constData(), mode) == 0;
}

// What discovery says about the one plugin in `dir`.
BackendInfo discover_one(const QString& dir) {
    const auto providers = PluginSearchPath::from_dirs({dir.toStdString()}).discover(nullptr);
    return providers.size() == 1 ? providers[0]->describe() : BackendInfo{};
}

std::string all_errors(const PluginManifest& m) {
    std::string out;
    for (const auto& e : m.errors)
        out += e + "\n";
    return out;
}

} // namespace

class TestUntrusted : public QObject {
    Q_OBJECT
private slots:
    // --- One bad manifest never hides the others ---

    void badManifestIsInvalidNotFatal_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("errorContains");
        QTest::newRow("number overflow 1e400")
            << QString::fromStdString(minimal(R"j("x": 1e400)j")) << "line 1, column";
        QTest::newRow("number overflow 1e999 in a kernel")
            << QString::fromStdString(minimal(R"j("kernels": [{"op": "gemm", "w": 1e999}])j"))
            << "number overflow";
        QTest::newRow("nested 100000 deep")
            << QString::fromStdString(minimal(R"j("x": )j" + nested(100000)))
            << "nested deeper than 32 levels";
        QTest::newRow("nested 5000 deep in capabilities")
            << QString::fromStdString(
                   minimal(R"j("capabilities": {"vendor": )j" + nested(5000) + "}"))
            << "nested deeper than";
        QTest::newRow("core version 2.0")
            << QString::fromStdString(minimal(R"j("capabilities": {"min_core_version": "2.0"})j"))
            << "key 'capabilities.min_core_version': '2.0' is not a version";
        QTest::newRow("core version 2")
            << QString::fromStdString(minimal(R"j("capabilities": {"max_core_version": "2"})j"))
            << "key 'capabilities.max_core_version'";
        QTest::newRow("core version overflows")
            << QString::fromStdString(
                   minimal(R"j("capabilities": {"min_core_version": "99999999999999999999.0.0"})j"))
            << "key 'capabilities.min_core_version'";
        QTest::newRow("library with NUL")
            << QString::fromStdString(R"j({"schema": 1, "name": "m", "version": "0.1", )j"
                                      R"j("library": "lib.so\u0000.txt"})j")
            << "key 'library': contains a NUL character";
        QTest::newRow("duplicate key")
            << QString::fromStdString(minimal(R"j("name": "other")j")) << "duplicate key 'name'";
    }
    void badManifestIsInvalidNotFatal() {
        QFETCH(QString, text);
        QFETCH(QString, errorContains);
        const std::string body = text.toStdString();
        const auto m = PluginManifest::parse(body);
        QVERIFY(!m.is_valid());
        QVERIFY2(all_errors(m).find(errorContains.toStdString()) != std::string::npos,
                 all_errors(m).c_str());
    }

    void invalidUtf8IsAnErrorWithAPosition() {
        const auto m =
            PluginManifest::parse(minimal("\"d\": \"" + std::string(1, char(0xff)) + "\""));
        QVERIFY(!m.is_valid());
        QVERIFY2(all_errors(m).find("line 1, column") != std::string::npos, all_errors(m).c_str());
    }

    void versionsWithThreeNumbersAreFine() {
        const auto m = PluginManifest::parse(minimal(
            R"j("capabilities": {"min_core_version": "0.1.0", "max_core_version": "9.0.0rc1"})j"));
        QVERIFY2(m.is_valid(), all_errors(m).c_str());
    }

    void limitsHaveClearMessages() {
        // Size: over 1 MiB, even when it is valid JSON.
        const auto big = PluginManifest::parse(minimal(std::string("\"description\": \"") +
                                                       std::string(kMaxManifestBytes, 'x') + "\""));
        QVERIFY(!big.is_valid());
        QVERIFY2(all_errors(big).find("1 MiB a manifest may have") != std::string::npos,
                 all_errors(big).c_str());
        // Cells: more kernels than a manifest may declare.
        std::string cells = R"j("kernels": [)j";
        for (std::size_t i = 0; i <= kMaxManifestCells; ++i)
            cells += std::string(i ? "," : "") + R"j({"op":"o","device":"cpu","arch":"a"})j";
        const auto many = PluginManifest::parse(minimal(cells + "]"));
        QVERIFY(!many.is_valid());
        QVERIFY2(all_errors(many).find("may declare at most 10000") != std::string::npos,
                 all_errors(many).c_str());
        // Values: a flat array of more values than a manifest may hold.
        std::string values = R"j("x": [0)j";
        for (std::size_t i = 0; i < kMaxManifestValues; ++i)
            values += ",0";
        const auto flat = PluginManifest::parse(minimal(values + "]"));
        QVERIFY(!flat.is_valid());
        QVERIFY2(all_errors(flat).find("more than 100000 values") != std::string::npos,
                 all_errors(flat).c_str());
    }

    void discoveryGoesOnPastABadManifest() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(write_file(dir.filePath("a.plugin.json"), minimal(R"j("x": 1e400)j", "a")));
        QVERIFY(
            write_file(dir.filePath("b.plugin.json"), minimal(R"j("x": )j" + nested(100000), "b")));
        QVERIFY(write_file(dir.filePath("c.plugin.json"), minimal({}, "c")));
        QVERIFY(write_file(dir.filePath("libm-plugin.so"), "not really"));
        const auto providers =
            PluginSearchPath::from_dirs({dir.path().toStdString()}).discover(nullptr);
        QCOMPARE(providers.size(), std::size_t(3));
        const auto a = providers[0]->describe();
        QCOMPARE(a.state, BackendState::Invalid);
        QVERIFY2(a.error.find("a.plugin.json") != std::string::npos, a.error.c_str());
        QVERIFY2(a.error.find("line 1, column") != std::string::npos, a.error.c_str());
        QVERIFY2(a.error.find("number overflow") != std::string::npos, a.error.c_str());
        const auto b = providers[1]->describe();
        QCOMPARE(b.state, BackendState::Invalid);
        QVERIFY2(b.error.find("nested deeper") != std::string::npos, b.error.c_str());
        QCOMPARE(providers[2]->describe().name, std::string("c"));
        QVERIFY(providers[2]->describe().state != BackendState::Invalid);
    }

    void strictParserErrors_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("what");
        QTest::newRow("duplicate nested") << R"j({"a": {"b": 1, "b": 2}})j"
                                          << "line 1, column 18: duplicate key 'b'";
        QTest::newRow("overflow") << "[1, 1e400]"
                                  << "line 1, column";
        QTest::newRow("syntax") << "{\n  \"a\": x}"
                                << "line 2, column 8";
        QTest::newRow("deep") << QString::fromStdString(nested(65)) << "nested deeper than 64";
    }
    void strictParserErrors() {
        QFETCH(QString, text);
        QFETCH(QString, what);
        const std::string body = text.toStdString();
        try {
            (void)jsonread::parse(body);
            QFAIL("parsed");
        } catch (const jsonread::ParseError& e) {
            QVERIFY2(std::string(e.what()).find(what.toStdString()) != std::string::npos, e.what());
        }
        QVERIFY(jsonread::parse(R"j({"a": [1, {"a": 2}], "b": {"a": 3}})j").is_object());
    }

    // parse()'s fast path builds the same values (and types) as the strict parser, and
    // refuses everything the strict parser refuses (which then names the error).
    void fastPathMatchesStrictParser_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<bool>("rejectDuplicates");
        auto row = [](const char* name, QByteArray text, bool reject = true) {
            QTest::newRow(name) << text << reject;
        };
        row("empty object", "{}");
        row("empty array", " [ ] ");
        row("scalars", R"j([true, false, null, "", "a b", 0, -0, 7, -7])j");
        row("integer limits", "[18446744073709551615, 18446744073709551616, "
                              "-9223372036854775808, -9223372036854775809, 9223372036854775808]");
        row("floats", R"j([0.5, -0.25, 1e3, 1E+2, 2e-3, 1.5e308, 4.9e-324, 0.1, 123.456e-7])j");
        row("escapes",
            "{\"e\": \"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"u\": \"\\u00e9\\ud83d\\ude00\\u0000\"}");
        row("utf-8", "{\"k\\u00e9\": \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbf\"}");
        row("nested", R"j({"a": [1, {"b": [[], {}], "c": {"d": null}}], "z": {"y": [true]}})j");
        row("duplicates kept last", R"j({"a": 1, "a": {"b": 2}})j", false);
        row("byte order mark", "\xef\xbb\xbf{\"a\": 1}");
        row("whitespace", " \t\r\n{ \"a\" :\n1 ,\"b\":[ 1 , 2 ]\t}\r\n");
        row("trailing comma", R"j({"a": 1,})j");
        row("trailing comma in array", "[1,]");
        row("leading zero", "01");
        row("bare point", "[1.]");
        row("no integer part", "[.5]");
        row("lone minus", "-");
        row("plus sign", "+1");
        row("unterminated string", "\"abc");
        row("control character", "\"a\x01\"");
        row("overlong utf-8", "\"\xc0\xaf\"");
        row("surrogate in utf-8", "\"\xed\xa0\x80\"");
        row("above U+10FFFF", "\"\xf4\x90\x80\x80\"");
        row("truncated utf-8", "\"\xe2\x82\"");
        row("lone continuation byte", "\"\x80\"");
        row("bad escape", "\"\\x\"");
        row("lone surrogate escape", "\"\\ud83d\"");
        row("missing colon", R"j({"a" 1})j");
        row("two documents", "{}{}");
        // RFC 8259: nothing but whitespace after the top-level value. nlohmann's lexer reads
        // a NUL as the end of the input; both paths refuse it, with its position.
        row("nul after a number", QByteArray("123\0", 4));
        row("nul then junk", QByteArray("123\0junk", 8));
        row("nul after an object", QByteArray("{\"a\": 1}\0{}", 11));
        row("nul inside an array", QByteArray("[1,\0 2]", 7));
        row("nul inside a string", QByteArray("\"a\0b\"", 5));
        row("nul only", QByteArray("\0", 1));
        row("junk after a value", "[1] x");
        row("invalid byte after a value", "[1] \xff");
        row("escape before an emoji", "[\"\\\xf0\x9f\x98\x80\"]");
        row("escape before 0xff", "[\"\\\xff\"]");
        row("invalid byte in a key", "{\"\xff\": 1}");
        row("overlong nul", "\"\xc0\x80\"");
        row("five-byte form", "\"\xf8\x88\x80\x80\x80\"");
        row("utf-16 byte order mark", QByteArray("\xff\xfe[\0]\0", 6));
        row("byte order mark only", "\xef\xbb\xbf");
        row("truncated at the end", "\"\xf0\x9f\x98");
        row("bad literal", "[tru]");
        row("missing comma", "[1 2]");
        row("duplicate key", R"j({"a": 1, "a": 2})j");
        row("duplicate nested key", R"j({"x": {"a": 1, "a": 2}})j");
        row("overflow", "[1e400]");
        row("negative overflow", "[-1e400]");
        row("deep", QByteArray::fromStdString(nested(65)));
        row("deep enough", QByteArray::fromStdString(nested(64)));
        row("nothing", "");
        row("only space", "   ");
        row("unquoted key", "{a: 1}");
        row("single quotes", "['a']");
        row("comment", "[1 /* no */]");
    }
    void fastPathMatchesStrictParser() {
        QFETCH(QByteArray, text);
        QFETCH(bool, rejectDuplicates);
        const std::string_view body(text.constData(), std::size_t(text.size()));
        jsonread::ParseLimits limits;
        limits.reject_duplicate_keys = rejectDuplicates;
        // Types as well as values: 7 read as unsigned or as signed dump alike.
        std::function<std::string(const nlohmann::json&)> typed = [&](const nlohmann::json& j) {
            std::string out = std::to_string(int(j.type())) + ":";
            if (j.is_object() || j.is_array()) {
                for (auto it = j.begin(); it != j.end(); ++it)
                    out += (j.is_object() ? it.key() : std::string()) + "=" + typed(*it) + ",";
                return out;
            }
            return out + j.dump();
        };
        std::string strict, fast;
        try {
            strict = typed(jsonread::detail::parse_strict(body, limits));
        } catch (const jsonread::ParseError& e) {
            strict = std::string("error: ") + e.what();
        }
        try {
            fast = typed(jsonread::parse(body, limits));
        } catch (const jsonread::ParseError& e) {
            fast = std::string("error: ") + e.what();
        }
        QCOMPARE(fast, strict);
        // Whatever the text held, an error message is valid UTF-8 (a JSON writer takes it).
        QVERIFY2(QString::fromUtf8(QByteArray::fromStdString(fast)).toUtf8() ==
                     QByteArray::fromStdString(fast),
                 fast.c_str());
    }

    // A NUL or anything else after the top-level value is refused with its position, never
    // read as the value before it ("123\0" is not the number 123).
    void trailingBytesAreRefusedWithTheirPosition() {
        const std::pair<std::string_view, std::string_view> cases[] = {
            {std::string_view("123\0", 4), "line 1, column 4: a NUL byte after the top-level"},
            {std::string_view("{}\n\0x", 5), "line 2, column 1: a NUL byte after the top-level"},
            {std::string_view("[1,\0]", 5), "line 1, column 4: a NUL byte"},
            {"[1] x", "line 1, column 5"},
        };
        for (const auto& [text, what] : cases) {
            try {
                (void)jsonread::parse(text);
                QFAIL(("parsed: " + std::string(text)).c_str());
            } catch (const jsonread::ParseError& e) {
                QVERIFY2(std::string(e.what()).find(what) != std::string::npos, e.what());
            }
        }
        const auto m = PluginManifest::parse(std::string_view("123\0", 4));
        QVERIFY(!m.is_valid());
        QVERIFY2(all_errors(m).find("NUL") != std::string::npos &&
                     all_errors(m).find("got integer") == std::string::npos,
                 all_errors(m).c_str());
    }

    // The manifest reader's direct read (FastScanner) and its collecting reader give the same
    // verdict and the same errors on every hostile input, and the errors are valid UTF-8.
    void manifestPathsAgreeOnHostileInput() {
        const std::string good = minimal("\"description\": \"d\"");
        std::vector<std::string> corpus = {
            std::string("[\"\\\xf0\x9f\x98\x80\"]"),
            good + std::string(1, '\0'),
            good + std::string("\0{}", 3),
            "\xef\xbb\xbf" + good,
            minimal("\"description\": \"\xc0\xaf\""),
            minimal("\"description\": \"a\\\xff\""),
            minimal("\"\xff\": 1"),
            minimal("\"description\": \"\\ud800\""),
            minimal("\"description\": \"\xed\xa0\x80\""),
            good + " \xff",
            good + " x",
        };
        for (const auto& text : corpus) {
            const auto fast = PluginManifest::parse(text);
            const auto general = switchyard::detail::parse_manifest_general(text);
            QCOMPARE(fast.is_valid(), general.is_valid());
            QCOMPARE(fast.errors, general.errors);
            for (const auto& e : fast.errors)
                QVERIFY2(QString::fromUtf8(QByteArray::fromStdString(e)).toUtf8() ==
                             QByteArray::fromStdString(e),
                         e.c_str());
        }
    }
    void fastPathKeepsTheValueLimit() {
        jsonread::ParseLimits limits;
        limits.max_values = 3;
        QVERIFY(jsonread::parse("[1, 2]", limits).is_array());
        bool refused = false;
        try {
            (void)jsonread::parse("[1, 2, 3]", limits);
        } catch (const jsonread::ParseError& e) {
            refused = std::string(e.what()).find("more than 3 values") != std::string::npos;
        }
        QVERIFY(refused);
    }

    // --- Nothing hangs on a special file ---

    void fifoManifestIsRefusedNotWaitedOn() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto fifo = dir.filePath("x.plugin.json").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        QVERIFY(write_file(dir.filePath("c.plugin.json"), minimal({}, "c")));
        const auto providers =
            PluginSearchPath::from_dirs({dir.path().toStdString()}).discover(nullptr);
        QCOMPARE(providers.size(), std::size_t(2));
        const auto c = providers[0]->describe();
        QCOMPARE(c.name, std::string("c"));
        const auto x = providers[1]->describe();
        QCOMPARE(x.state, BackendState::Invalid);
        QVERIFY2(x.error.find("not a regular file") != std::string::npos, x.error.c_str());
        // Read directly, too.
        const auto m = PluginManifest::read(fifo);
        QVERIFY(!m.is_valid());
        QVERIFY2(all_errors(m).find("not a regular file") != std::string::npos,
                 all_errors(m).c_str());
    }

    void fifoOrDeviceLibraryIsNotARegularFile() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(write_file(dir.filePath("f.plugin.json"), minimal({}, "f")));
        QCOMPARE(::mkfifo(dir.filePath("libm-plugin.so").toLocal8Bit().constData(), 0600), 0);
        const auto providers =
            PluginSearchPath::from_dirs({dir.path().toStdString()}).discover(nullptr);
        QCOMPARE(providers.size(), std::size_t(1));
        const auto info = providers[0]->describe();
        QVERIFY(info.state != BackendState::Discovered && info.state != BackendState::Loaded);
        QVERIFY2(info.error.find("not a regular file") != std::string::npos, info.error.c_str());
        QVERIFY(info.error.find("chmod") == std::string::npos);
        auto* plugin = dynamic_cast<PluginProvider*>(providers[0].get());
        QVERIFY(plugin);
        QVERIFY(!plugin->inspect_library()); // never opened
        // A symlink to /dev/zero as the library: no chmod advice on a device node.
        QTemporaryDir dir2;
        QVERIFY(write_file(dir2.filePath("z.plugin.json"), minimal({}, "z")));
        QCOMPARE(::symlink("/dev/zero", dir2.filePath("libm-plugin.so").toLocal8Bit().constData()),
                 0);
        const auto z = PluginSearchPath::from_dirs({dir2.path().toStdString()})
                           .discover(nullptr)[0]
                           ->describe();
        QVERIFY2(z.error.find("character device") != std::string::npos, z.error.c_str());
        QVERIFY2(z.error.find("chmod") == std::string::npos, z.error.c_str());
    }

    void specialReportInputsSayWhatTheyAre() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto folder = load_error(dir.path().toStdString());
        QVERIFY2(folder.find("is a folder, not a regular file") != std::string::npos,
                 folder.c_str());
        const auto zero = load_error("/dev/zero");
        QVERIFY2(zero.find("is a character device, not a regular file") != std::string::npos,
                 zero.c_str());
        // A FIFO with no writer reads as empty, at once.
        const auto fifo = dir.filePath("r.json").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        const auto empty = load_error(fifo);
        QVERIFY2(empty.find("empty") != std::string::npos, empty.c_str());
    }

    // --- Writing reports never destroys anything ---

    void saveKeepsTheModeAndReplacesAtomically() {
        QTemporaryDir dir;
        const auto path = dir.filePath("r.json").toStdString();
        QVERIFY(write_file(QString::fromStdString(path), "old"));
        QCOMPARE(::chmod(path.c_str(), 0600), 0);
        report_of({row("copy", {1e-3, 1e-3})}).save(path);
        struct stat st {};
        QCOMPARE(::stat(path.c_str(), &st), 0);
        QCOMPARE(int(st.st_mode & 07777), 0600);
        QCOMPARE(Report::load(path).rows.size(), std::size_t(1));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1); // no temp left
    }

    void saveNeverReplacesASpecialFile() {
        QTemporaryDir dir;
        const auto report = report_of({row("copy", {1e-3})});
        // A FIFO nobody reads: refused, still a FIFO.
        const auto fifo = dir.filePath("fifo.json").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        QVERIFY_THROWS_EXCEPTION(ReportError, report.save(fifo));
        struct stat st {};
        QCOMPARE(::lstat(fifo.c_str(), &st), 0);
        QVERIFY(S_ISFIFO(st.st_mode));
        // /dev/null: written through, still a character device.
        report.save("/dev/null");
        QCOMPARE(::stat("/dev/null", &st), 0);
        QVERIFY(S_ISCHR(st.st_mode));
        // A folder: refused.
        QVERIFY_THROWS_EXCEPTION(ReportError, report.save(dir.path().toStdString()));
        // A symlink to another report: the link stays, its target gets the report.
        const auto target = dir.filePath("target.json").toStdString();
        const auto link = dir.filePath("link.json").toStdString();
        QVERIFY(write_file(QString::fromStdString(target), "old"));
        QCOMPARE(::symlink(target.c_str(), link.c_str()), 0);
        report.save(link);
        QCOMPARE(::lstat(link.c_str(), &st), 0);
        QVERIFY(S_ISLNK(st.st_mode));
        QCOMPARE(Report::load(target).rows.size(), std::size_t(1));
        // A symlink to a character device that is not a terminal or /dev/null: refused.
        const auto zero = dir.filePath("zero.json").toStdString();
        QCOMPARE(::symlink("/dev/zero", zero.c_str()), 0);
        QVERIFY_THROWS_EXCEPTION(ReportError, report.save(zero));
        QCOMPARE(::lstat(zero.c_str(), &st), 0);
        QVERIFY(S_ISLNK(st.st_mode));
        // A planted file under a predictable temporary name is never followed or used.
        QVERIFY(write_file(dir.filePath("new.json.tmp." + QString::number(::getpid())), "x"));
        report.save(dir.filePath("new.json").toStdString());
        QCOMPARE(QString::fromStdString(
                     read_all(dir.filePath("new.json.tmp." + QString::number(::getpid())))),
                 QStringLiteral("x"));
    }

    void failedSaveLeavesThePreviousFile() {
        if (::geteuid() == 0)
            QSKIP("root can write into a read-only folder");
        QTemporaryDir dir;
        const auto path = dir.filePath("r.json").toStdString();
        QVERIFY(write_file(QString::fromStdString(path), "previous"));
        QCOMPARE(::chmod(dir.path().toLocal8Bit().constData(), 0500), 0);
        QVERIFY_THROWS_EXCEPTION(ReportError, report_of({}).save(path));
        ::chmod(dir.path().toLocal8Bit().constData(), 0700);
        QCOMPARE(read_all(QString::fromStdString(path)), std::string("previous"));
    }

    // --- Clean output, compare ---

    void duplicateKeysInAReportAreErrors() {
        auto j = report_of({row("copy", {1e-3})}).to_json().dump();
        j.insert(j.size() - 1, R"j(, "rows": [])j");
        try {
            (void)Report::parse(j);
            QFAIL("parsed");
        } catch (const ReportError& e) {
            QVERIFY2(std::string(e.what()).find("duplicate key 'rows'") != std::string::npos,
                     e.what());
        }
    }

    void zeroTimeBaselineIsNeverFaster() {
        const std::vector<double> zeros(30, 0.0);
        const std::vector<double> some(30, 1e-3);
        const auto c =
            Comparison::of(report_of({row("copy", zeros)}), report_of({row("copy", some)}));
        QCOMPARE(c.pairs().size(), std::size_t(1));
        QCOMPARE(c.pairs()[0].result.verdict, Verdict::Ambiguous);
        QVERIFY(!std::isfinite(c.pairs()[0].result.ratio));
        QVERIFY(c.to_json()["pairs"][0]["ratio"].is_null());
        QVERIFY(c.to_text().find("FASTER") == std::string::npos);
        QVERIFY(c.to_text().find("undefined") != std::string::npos);
    }

    // --- A trust model that holds (OpenSSH StrictModes on every component) ---

    // A group-writable folder is refused unless the group is the owner's private group.
    // As root (CI) the folder is given a group that does not exist; otherwise one of this
    // user's supplementary groups.
    void groupWritableFolderIsRefused() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.filePath("plugins");
        QVERIFY(make_plugin(dir));
        QCOMPARE(discover_one(dir).cause == BackendCause::Untrusted, false);
        gid_t group = 54321;
        if (::geteuid() != 0) {
            gid_t groups[64];
            const int n = ::getgroups(64, groups);
            group = 0;
            for (int i = 0; i < n; ++i)
                if (groups[i] != ::getegid())
                    group = groups[i];
            if (group == 0)
                QSKIP("needs root or a supplementary group to give the folder");
        }
        QCOMPARE(::chown(dir.toLocal8Bit().constData(), ::geteuid(), group), 0);
        QVERIFY(set_mode(dir, 0775));
        const auto info = discover_one(dir);
        QCOMPARE(info.state, BackendState::Invalid);
        QCOMPARE(info.cause, BackendCause::Untrusted);
        QVERIFY2(info.error.find("plugin folder " + dir.toStdString() + " is writable by group") !=
                     std::string::npos,
                 info.error.c_str());
        QVERIFY2(info.error.find("chmod g-w " + dir.toStdString()) != std::string::npos,
                 info.error.c_str());
        // The manifest alone, group-writable, too.
        QVERIFY(set_mode(dir, 0755));
        const QString manifest = dir + "/t.plugin.json";
        QCOMPARE(::chown(manifest.toLocal8Bit().constData(), ::geteuid(), group), 0);
        QVERIFY(set_mode(manifest, 0664));
        QCOMPARE(discover_one(dir).cause, BackendCause::Untrusted);
    }

    // Others can swap the plugin folder when they can write to its parent; a sticky parent
    // (as /tmp) stops them, since the folder is ours.
    void parentWritableByOthersIsRefused() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString parent = tmp.filePath("open");
        const QString dir = parent + "/plugins";
        QVERIFY(make_plugin(dir));
        QVERIFY(set_mode(parent, 0777));
        const auto info = discover_one(dir);
        QCOMPARE(info.cause, BackendCause::Untrusted);
        QVERIFY2(info.error.find("folder " + parent.toStdString() +
                                 " is writable by other users (mode 0777)") != std::string::npos,
                 info.error.c_str());
        QVERIFY2(info.error.find("chmod o-w " + parent.toStdString()) != std::string::npos,
                 info.error.c_str());
        QVERIFY(set_mode(parent, 01777));
        QVERIFY2(discover_one(dir).cause != BackendCause::Untrusted,
                 discover_one(dir).error.c_str());
        // ...but the plugin folder itself may not rely on a sticky bit.
        QVERIFY(set_mode(dir, 01777));
        QCOMPARE(discover_one(dir).cause, BackendCause::Untrusted);
        // The same rule when the library is checked again at load (untrusted_reason).
        QVERIFY(set_mode(dir, 0755));
        QVERIFY(set_mode(parent, 0777));
        QVERIFY(!untrusted_reason((dir + "/libm-plugin.so").toStdString(), "library").empty());
    }

    // A library that is a symbolic link into a folder others can write to: they can replace
    // the target. The message names that folder and the link.
    void librarySymlinkIntoAnOthersWritableFolder() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString evil = tmp.filePath("shared");
        QVERIFY(QDir().mkpath(evil));
        QVERIFY(write_file(evil + "/real.so", "not an ELF file"));
        QVERIFY(set_mode(evil, 0777));
        const QString dir = tmp.filePath("plugins");
        QVERIFY(make_plugin(dir, "../shared/real.so"));
        const auto info = discover_one(dir);
        QCOMPARE(info.cause, BackendCause::Untrusted);
        QVERIFY2(info.error.find("a symbolic link to ../shared/real.so") != std::string::npos,
                 info.error.c_str());
        QVERIFY2(info.error.find("folder " + evil.toStdString() + " is writable by other users") !=
                     std::string::npos,
                 info.error.c_str());
        // A chain of links: the folder of the middle one is checked too.
        QVERIFY(set_mode(evil, 0755));
        const QString middle = tmp.filePath("middle");
        QVERIFY(QDir().mkpath(middle));
        QCOMPARE(::symlink((evil + "/real.so").toLocal8Bit().constData(),
                           (middle + "/hop.so").toLocal8Bit().constData()),
                 0);
        QVERIFY(QFile::remove(dir + "/libm-plugin.so"));
        QCOMPARE(::symlink((middle + "/hop.so").toLocal8Bit().constData(),
                           (dir + "/libm-plugin.so").toLocal8Bit().constData()),
                 0);
        QVERIFY2(discover_one(dir).cause != BackendCause::Untrusted,
                 discover_one(dir).error.c_str());
        QVERIFY(set_mode(middle, 0777));
        const auto chained = discover_one(dir);
        QCOMPARE(chained.cause, BackendCause::Untrusted);
        QVERIFY2(chained.error.find("folder " + middle.toStdString()) != std::string::npos,
                 chained.error.c_str());
        // A link loop is an error, not a hang.
        QVERIFY(QFile::remove(dir + "/libm-plugin.so"));
        QCOMPARE(::symlink("libm-plugin.so", (dir + "/libm-plugin.so").toLocal8Bit().constData()),
                 0);
        QVERIFY(discover_one(dir).state != BackendState::Discovered);
    }

    // Owned by another user: never chmod advice (the user cannot chmod it); the owner is
    // named. Root can hand a file to another uid, so this runs in CI.
    void ownedByAnotherUserNamesTheOwner() {
        if (::geteuid() != 0)
            QSKIP("needs root to give a file to another user");
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.filePath("plugins");
        QVERIFY(make_plugin(dir));
        QCOMPARE(::chown((dir + "/libm-plugin.so").toLocal8Bit().constData(), 54321, 54321), 0);
        const auto info = discover_one(dir);
        QCOMPARE(info.cause, BackendCause::Untrusted);
        QVERIFY2(info.error.find("is owned by uid 54321") != std::string::npos, info.error.c_str());
        QVERIFY2(info.error.find("chmod") == std::string::npos, info.error.c_str());
        // A library symlinked to /dev/zero: a device, no chmod advice (a folder holding it
        // is checked first: /dev is root's and not writable by others).
        QVERIFY(QFile::remove(dir + "/libm-plugin.so"));
        QCOMPARE(::symlink("/dev/zero", (dir + "/libm-plugin.so").toLocal8Bit().constData()), 0);
        const auto zero = discover_one(dir);
        QCOMPARE(zero.cause, BackendCause::Untrusted);
        QVERIFY2(zero.error.find("its target /dev/zero is a character device") != std::string::npos,
                 zero.error.c_str());
        QVERIFY2(zero.error.find("chmod") == std::string::npos, zero.error.c_str());
    }

    // A size whose buffers do not fit in this machine's memory is refused before anything
    // is allocated, saying how much it needs and how much there is.
    void workloadTooLargeForMemorySaysHowMuch() {
        const auto* gemm = find_op("gemm");
        QVERIFY(gemm);
        std::string error;
        const auto dims = parse_dims(*gemm, "100000x100000x100000", &error);
        QVERIFY2(dims, error.c_str());
        try {
            Workload w(*gemm, *dims);
            QFAIL("a 40 GB workload was allocated");
        } catch (const std::length_error& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("gemm 100000x100000x100000 needs 298.0 GiB") != std::string::npos &&
                         what.find("this machine has") != std::string::npos,
                     e.what());
        }
        QVERIFY(!parse_dims(*gemm, "1099511627776", &error));
        QVERIFY2(error.find("larger than the limit") != std::string::npos, error.c_str());
    }

    // --- Resources stay proportional to what is shown ---

    // A report with more samples per row than Report::kMaxSamplesPerRow: the first ones are
    // kept, the rest read and dropped, and a warning says so.
    void reportSamplesAreCappedWithAWarning() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto r = row("gemm", std::vector<double>(5, 1e-3));
        const std::size_t n = Report::kMaxSamplesPerRow + 12345;
        r.samples.assign(n, 2e-3);
        r.stats = SampleStats::from(r.samples);
        const auto text =
            report_of({r, row("copy", std::vector<double>(5, 1e-3))}).to_json().dump();
        QElapsedTimer timer;
        timer.start();
        const auto loaded = Report::parse(text, "big.json");
        QVERIFY(timer.elapsed() < 5000);
        QCOMPARE(loaded.rows.size(), std::size_t(2));
        QCOMPARE(loaded.rows[0].samples.size(), Report::kMaxSamplesPerRow);
        QCOMPARE(loaded.rows[1].samples.size(), std::size_t(5));
        QCOMPARE(loaded.warnings.size(), std::size_t(1));
        QVERIFY2(loaded.warnings[0].find("big.json: 1 arrays (row samples) hold more than 100000 "
                                         "numbers, up to 112345") != std::string::npos &&
                     loaded.warnings[0].find("12345 were ignored") != std::string::npos,
                 loaded.warnings[0].c_str());
        // Under the cap: nothing said.
        QVERIFY(Report::parse(report_of({row("a", std::vector<double>(5, 1e-3))}).to_json().dump())
                    .warnings.empty());
    }

    // --- Small items ---

    // The text renderer escapes what it takes from a manifest: no escape sequence reaches a
    // terminal and no newline forges a line.
    void backendInfoTextEscapesControlCharacters() {
        BackendInfo info;
        info.name = "evil\x1b]0;title\x07";
        info.description = "line\ncuda plugin loaded\x1b[2J";
        info.version = "1.0\r";
        info.tags = {"t\x9b"};
        info.error = "bad\nProblem: none";
        info.diagnostics = {"d\x00x"};
        for (const auto& text : {render_text(info), summary_line(info)}) {
            QVERIFY2(text.find('\x1b') == std::string::npos &&
                         text.find('\x07') == std::string::npos &&
                         text.find('\r') == std::string::npos,
                     text.c_str());
            QVERIFY2(text.find("\ncuda plugin loaded") == std::string::npos, text.c_str());
            QVERIFY2(text.find("\nProblem: none") == std::string::npos, text.c_str());
        }
        QVERIFY(render_text(info).find("line\\x0acuda plugin loaded\\x1b[2J") != std::string::npos);
        QVERIFY(summary_line(info).find("evil\\x1b]0;title\\x07") != std::string::npos);
    }

    // A FIFO reached through a DT_NEEDED search (the library's RUNPATH $ORIGIN/deps) is
    // refused as "not a regular file", never opened for reading and waited on.
    void elfDependencyOnAFifoDoesNotHang() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(QDir(dir.path()).mkpath("deps"));
        const QString lib = dir.filePath("libswitchyard-fixture-missing-dep.so");
        QVERIFY(QFile::copy(SWITCHYARD_FIXTURE_DIR
                            "/plugins/missing_dep/libswitchyard-fixture-missing-dep.so",
                            lib));
        const QString fifo = dir.filePath("deps/libswitchyard-nonexistent-dep.so.1");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        QElapsedTimer timer;
        timer.start();
        const auto report = diagnose_library(lib.toStdString());
        QVERIFY(timer.elapsed() < 5000);
        QVERIFY(report.readable);
        const auto missing = report.unresolved();
        QVERIFY(std::find(missing.begin(), missing.end(), "libswitchyard-nonexistent-dep.so.1") !=
                missing.end());
        std::string error;
        QVERIFY(!read_elf_dynamic(fifo.toStdString(), &error));
        QVERIFY2(error.find("FIFO") != std::string::npos &&
                     error.find("not a regular file") != std::string::npos,
                 error.c_str());
    }

    void longOpNamesAreNotCut() {
        const std::string op(2000, 'o');
        const std::vector<double> s(5, 1e-3);
        const auto c = Comparison::of(report_of({row(op, s), row("next", s)}),
                                      report_of({row(op, s), row("next", s)}));
        const auto text = c.to_text();
        QVERIFY(text.find(op + " ") != std::string::npos);
        QVERIFY(text.find("\nnext ") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestUntrusted)
#include "tst_untrusted.moc"
