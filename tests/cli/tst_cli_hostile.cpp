// SPDX-License-Identifier: MIT
// A corpus of hostile manifests and reports (invalid UTF-8 in keys, values, escapes and file
// names; NUL bytes; byte order marks; overlong forms; surrogates) through every command with
// machine-readable output: each output is valid UTF-8 and parses as JSON, names the bad file,
// and still lists every other backend. The human outputs (the table, Markdown, CSV) are valid
// UTF-8 too, with the bad bytes shown as visible escapes.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "support/childprocess.h"
#include "support/versionneed.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <utility>
#include <vector>

namespace {

struct Run {
    int code = -1;
    QByteArray out;
    QByteArray err;
};

Run cli(const QStringList& args, const QString& pluginPath = {}) {
    const auto r = switchyard::test::run_cli(args, pluginPath, {.timeout_ms = 120000});
    if (!r.finished)
        return {};
    return {r.code, r.out, r.err};
}

// Written with POSIX calls: the path's bytes as they are (QFile would turn bytes that are not
// UTF-8 into U+FFFD, a valid name).
bool writeFile(const QByteArray& path, const QByteArray& bytes) {
    const int fd = ::open(path.constData(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return false;
    const bool ok = ::write(fd, bytes.constData(), std::size_t(bytes.size())) == bytes.size();
    return ::close(fd) == 0 && ok;
}

// Well-formed UTF-8 (RFC 3629), checked here independently of the core's own checker:
// no overlong forms, no surrogates, nothing above U+10FFFF, no truncated sequence.
bool isUtf8(const QByteArray& bytes) {
    const auto* s = reinterpret_cast<const unsigned char*>(bytes.constData());
    const qsizetype n = bytes.size();
    for (qsizetype i = 0; i < n;) {
        const unsigned c = s[i];
        int len = 0;
        unsigned cp = 0, min = 0;
        if (c < 0x80) {
            ++i;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            len = 2, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4, cp = c & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (i + len > n)
            return false;
        for (int k = 1; k < len; ++k) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

// The output of a --json command: valid UTF-8 and one JSON document.
QJsonDocument parsedJson(const QByteArray& out, QString* why) {
    if (!isUtf8(out)) {
        *why = "not valid UTF-8";
        return {};
    }
    QJsonParseError error{};
    const auto doc = QJsonDocument::fromJson(out, &error);
    if (error.error != QJsonParseError::NoError)
        *why = "not JSON: " + error.errorString() + " at byte " + QString::number(error.offset);
    return doc;
}

const QByteArray kEmoji = "\xF0\x9F\x98\x80"; // U+1F600

QByteArray manifest(const QByteArray& name, const QByteArray& extra = {}) {
    return "{\"schema\": 1, \"name\": \"" + name +
           "\", \"version\": \"1.0.0\", \"library\": \"lib" + name + ".so\"" +
           (extra.isEmpty() ? QByteArray() : ", " + extra) + "}";
}

// File stem -> content. Each stem is also the name the backend is listed under when the
// manifest cannot be read.
std::vector<std::pair<QByteArray, QByteArray>> hostileManifests() {
    return {
        // The 9-byte manifest of the report: a backslash before a raw 4-byte emoji.
        {"h-escape-emoji", "[\"\\" + kEmoji + "\"]"},
        {"h-escape-ff", manifest("h-escape-ff", "\"description\": \"a\\\xFF\"")},
        {"h-lone-continuation", manifest("h-lone-continuation", "\"description\": \"\x80\"")},
        {"h-overlong-slash", manifest("h-overlong-slash", "\"description\": \"\xC0\xAF\"")},
        {"h-overlong-nul", manifest("h-overlong-nul", "\"description\": \"\xC0\x80\"")},
        {"h-overlong-3", manifest("h-overlong-3", "\"description\": \"\xE0\x80\xAF\"")},
        {"h-truncated-3", manifest("h-truncated-3", "\"description\": \"ab\xE2\x82\"")},
        {"h-truncated-end", "{\"schema\": 1, \"name\": \"x\xF0\x9F\x98"},
        {"h-surrogate-raw", manifest("h-surrogate-raw", "\"description\": \"\xED\xA0\x80\"")},
        {"h-surrogate-escaped", manifest("h-surrogate-escaped", "\"description\": \"\\ud800\"")},
        {"h-above-max", manifest("h-above-max", "\"description\": \"\xF4\x90\x80\x80\"")},
        {"h-five-byte", manifest("h-five-byte", "\"description\": \"\xF8\x88\x80\x80\x80\"")},
        {"h-byte-fe", manifest("h-byte-fe", "\"description\": \"\xFE\xFF\"")},
        {"h-key-invalid", manifest("h-key-invalid", "\"\xFF\xFE\": 1")},
        {"h-key-overlong", manifest("h-key-overlong", "\"\xC1\xBF\": 1")},
        {"h-name-invalid", manifest("h-name-\xFF")},
        {"h-outside-string", manifest("h-outside-string") + "\xFF"},
        {"h-nul-after", "123" + QByteArray(1, '\0') + "junk"},
        {"h-nul-after-object", manifest("h-nul-after-object") + QByteArray(1, '\0') + "{}"},
        {"h-nul-in-string",
         manifest("h-nul-in-string", "\"description\": \"a" + QByteArray(1, '\0') + "b\"")},
        {"h-nul-escaped", manifest("h-nul-escaped", "\"description\": \"a\\u0000b\"")},
        {"h-bom-utf8", "\xEF\xBB\xBF" + manifest("h-bom-utf8")},
        {"h-bom-utf16le", QByteArray("\xFF\xFE{\0\"\0", 6)},
        {"h-bom-utf16be", QByteArray("\xFE\xFF\0{\0\"", 6)},
        {"h-bidi-and-controls",
         manifest("h-bidi-and-controls", "\"description\": \"\xE2\x80\xAE\\u001b[2J\xC2\x85\"")},
        {"h-only-bytes", "\xFF\xFF\xFF\xFF"},
    };
}

// The manifests above that are valid JSON (a UTF-8 byte order mark is skipped, as RFC 8259
// allows a parser to).
const QList<QByteArray> kValidJson = {"h-nul-escaped", "h-bom-utf8", "h-bidi-and-controls"};

QJsonObject byName(const QJsonDocument& list, const QString& name) {
    for (const auto& v : list.object()["backends"].toArray())
        if (v.toObject()["name"].toString() == name)
            return v.toObject();
    return {};
}

} // namespace

class TestCliHostile : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QList<QByteArray> m_stems;

private slots:
    // QTemporaryDir cannot remove a file whose name is not UTF-8.
    void cleanupTestCase() {
        QDir dir(m_dir.path());
        for (const auto& f : dir.entryList(QDir::Files))
            ::unlink(QFile::encodeName(dir.filePath(f)).constData());
        ::unlink((QFile::encodeName(m_dir.path()) + "/h-file-\xFF\xC0.plugin.json").constData());
    }

    void initTestCase() {
        QVERIFY(m_dir.isValid());
        const QByteArray dir = QFile::encodeName(m_dir.path());
        for (const auto& [stem, content] : hostileManifests()) {
            QVERIFY(writeFile(dir + "/" + stem + ".plugin.json", content));
            m_stems << stem;
        }
        // A file name that is not UTF-8, holding a good manifest.
        QVERIFY(writeFile(dir + "/h-file-\xFF\xC0.plugin.json", manifest("h-file-name")));
        // The one healthy plugin beside them (its library is not a library: listed, never
        // loaded by list).
        QVERIFY(writeFile(dir + "/fine.plugin.json", manifest("fine")));
        QVERIFY(writeFile(dir + "/libfine.so", "not an ELF file"));
    }

    // list --json: valid, every hostile manifest named (invalid, with a reason that is valid
    // UTF-8), and the built-in cpu and the healthy plugin still listed.
    void listJsonNamesEveryBadManifest() {
        const Run r = cli({"list", "--json", "--all", "--include-unavailable"}, m_dir.path());
        QCOMPARE(r.code, 0);
        QString why;
        const auto doc = parsedJson(r.out, &why);
        QVERIFY2(why.isEmpty(), qPrintable(why + "\n" + QString::fromUtf8(r.err)));
        QCOMPARE(byName(doc, "cpu")["state"].toString(), QStringLiteral("loaded"));
        QVERIFY2(!byName(doc, "fine").isEmpty(), r.out.constData());
        for (const auto& stem : m_stems) {
            const auto row = byName(doc, QString::fromUtf8(stem));
            QVERIFY2(!row.isEmpty(), stem.constData());
            // Valid JSON whose strings hold what a terminal must not see: read, then failed
            // for its missing library. Everything else: invalid.
            const bool validJson = kValidJson.contains(stem);
            QVERIFY2(row["state"].toString() == (validJson ? "failed" : "invalid"),
                     qPrintable(stem + ": " + row["state"].toString()));
            QVERIFY2(row["error"].toString().contains(QString::fromUtf8(stem) + ".plugin.json"),
                     qPrintable(row["error"].toString()));
        }
        // The 9-byte manifest: the escape and the bytes after it, visibly.
        const auto emoji = byName(doc, "h-escape-emoji")["error"].toString();
        QVERIFY2(emoji.contains("line 1, column"), qPrintable(emoji));
        // NUL: trailing bytes are an error with its position, not a number read and the rest
        // ignored.
        const auto nul = byName(doc, "h-nul-after")["error"].toString();
        QVERIFY2(nul.contains("NUL") && nul.contains("line 1, column 4"), qPrintable(nul));
        QVERIFY2(!nul.contains("got integer"), qPrintable(nul));
        QVERIFY2(byName(doc, "h-nul-after-object")["error"].toString().contains("NUL"),
                 qPrintable(byName(doc, "h-nul-after-object")["error"].toString()));
        // The bad file name: listed, its bytes escaped where the name is shown.
        bool fileNamed = false;
        for (const auto& v : doc.object()["backends"].toArray())
            fileNamed |= v.toObject()["name"].toString() == "h-file-name";
        QVERIFY2(fileNamed, r.out.constData());
    }

    // Every other command with --json, on the same folder.
    void everyJsonOutputParses_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<bool>("listsBackends");
        QTest::newRow("doctor") << QStringList{"doctor", "--json"} << true;
        QTest::newRow("matrix") << QStringList{"matrix", "--json"} << false;
        QTest::newRow("matrix components")
            << QStringList{"matrix", "--json", "--components"} << false;
        QTest::newRow("show escape-emoji")
            << QStringList{"show", "h-escape-emoji", "--json"} << false;
        QTest::newRow("show key-invalid")
            << QStringList{"show", "h-key-invalid", "--json"} << false;
        QTest::newRow("show file-name") << QStringList{"show", "h-file-name", "--json"} << false;
        QTest::newRow("resolve") << QStringList{"resolve", "rms_norm", "--json"} << false;
        QTest::newRow("hardware") << QStringList{"hardware", "--json", "--no-probe"} << false;
    }
    void everyJsonOutputParses() {
        QFETCH(QStringList, args);
        QFETCH(bool, listsBackends);
        const Run r = cli(args, m_dir.path());
        QVERIFY2(r.code >= 0 && r.code <= 1, qPrintable(QString::fromUtf8(r.err)));
        QString why;
        const auto doc = parsedJson(r.out, &why);
        QVERIFY2(why.isEmpty(), qPrintable(why + "\n" + QString::fromUtf8(r.err)));
        QVERIFY2(!r.err.contains("json.exception"), r.err.constData());
        QVERIFY2(isUtf8(r.err), r.err.constData());
        if (listsBackends) {
            for (const auto& stem : m_stems)
                QVERIFY2(r.out.contains(stem + ".plugin.json"), stem.constData());
            QVERIFY(r.out.contains("fine"));
        }
    }

    // The human outputs: valid UTF-8, bad bytes as visible escapes, the terminal's controls
    // escaped.
    void humanOutputsAreValidUtf8_data() {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("list") << QStringList{"list", "--all", "--include-unavailable"};
        QTest::newRow("doctor markdown") << QStringList{"doctor", "--markdown"};
        QTest::newRow("doctor text") << QStringList{"doctor"};
        QTest::newRow("matrix csv") << QStringList{"matrix", "--csv"};
        QTest::newRow("show") << QStringList{"show", "h-escape-ff"};
        QTest::newRow("show file name") << QStringList{"show", "h-file-name"};
    }
    void humanOutputsAreValidUtf8() {
        QFETCH(QStringList, args);
        const Run r = cli(args, m_dir.path());
        QVERIFY2(r.code >= 0 && r.code <= 1, qPrintable(QString::fromUtf8(r.err)));
        QVERIFY2(isUtf8(r.out), r.out.constData());
        QVERIFY2(isUtf8(r.err), r.err.constData());
        QVERIFY2(!r.out.contains('\x1b') && !r.out.contains('\0'), r.out.constData());
        if (args.first() == "show" && args[1] == "h-file-name")
            QVERIFY2(r.out.contains("h-file-\\xff\\xc0.plugin.json"), r.out.constData());
    }

    // list's WHY NOT column carries the short reason of an invalid manifest, not only that it
    // is invalid.
    void listShowsTheShortReason() {
        const Run r = cli({"list", "--all", "--include-unavailable"}, m_dir.path());
        QCOMPARE(r.code, 0);
        const auto lines = r.out.split('\n');
        auto line = [&](const QByteArray& name) {
            for (const auto& l : lines)
                if (l.startsWith(name + " "))
                    return l;
            return QByteArray();
        };
        QVERIFY2(line("h-nul-after").contains("NUL byte"), line("h-nul-after").constData());
        QVERIFY2(line("h-escape-emoji").contains("not valid JSON at line 1, column"),
                 line("h-escape-emoji").constData());
    }

    // Support staff's question, answered before anything is loaded: a copy of the good
    // fixture whose version need asks for GLIBCXX_3.4.99 (a plugin built with a newer GCC)
    // is failed in `list` with the version named, `show` names the version and what the
    // system's libstdc++ provides, and `doctor` has it as a problem with its own fix; a copy
    // for aarch64 gets one line, not a fix per "missing" system library.
    void loadFailuresAreNamedBeforeLoading() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QByteArray d = QFile::encodeName(dir.path());
        QFile good(
            QStringLiteral(SWITCHYARD_FIXTURE_DIR "/plugins/good/libswitchyard-fixture-good.so"));
        QVERIFY(good.open(QIODevice::ReadOnly));
        const QByteArray library = good.readAll();
        QByteArray glibcxx = library;
        const auto at = switchyard::test::glibcxx_version_need(
            std::string_view(glibcxx.constData(), std::size_t(glibcxx.size())));
        QVERIFY(at != std::string_view::npos);
        glibcxx.replace(qsizetype(at), 14, QByteArray("GLIBCXX_3.4.99"));
        QByteArray aarch64 = library;
        aarch64[18] = char(183); // EM_AARCH64
        aarch64[19] = 0;
        // Cut after its program headers: a copy or download that stopped early.
        Elf64_Ehdr eh;
        std::memcpy(&eh, library.constData(), sizeof eh);
        const QByteArray cut = library.left(qsizetype(eh.e_phoff + eh.e_phnum * eh.e_phentsize));
        for (const auto& [name, bytes] :
             {std::pair{QByteArray("newer-gcc"), glibcxx},
              std::pair{QByteArray("foreign"), aarch64}, std::pair{QByteArray("cut"), cut}}) {
            QVERIFY(writeFile(d + "/lib" + name + ".so", bytes));
            QVERIFY(writeFile(d + "/" + name + ".plugin.json",
                              manifest(name, "\"capabilities\": {\"contract_version\": 1}")));
        }
        const Run list = cli({"list", "--all", "--include-unavailable"}, dir.path());
        QCOMPARE(list.code, 0);
        QByteArray newer, foreign;
        for (const auto& l : list.out.split('\n')) {
            if (l.startsWith("newer-gcc "))
                newer = l;
            if (l.startsWith("foreign "))
                foreign = l;
        }
        QVERIFY2(newer.contains("failed") && newer.contains("GLIBCXX_3.4.99 from libstdc++.so.6"),
                 list.out.constData());
        QVERIFY2(foreign.contains("failed") && foreign.contains("aarch64"), list.out.constData());

        const Run show = cli({"show", "newer-gcc"}, dir.path());
        QVERIFY2(show.out.contains("Problem (symbol_version_missing)"), show.out.constData());
        QVERIFY2(show.out.contains("needs GLIBCXX_3.4.99 from libstdc++.so.6") &&
                     show.out.contains("provides GLIBCXX_3.4 … GLIBCXX_3.4."),
                 show.out.constData());
        QVERIFY2(show.out.contains("newer toolchain"), show.out.constData());
        QVERIFY2(!show.out.contains("Reinstall or update the plugin"), show.out.constData());

        const Run arch = cli({"show", "foreign", "--json"}, dir.path());
        QString why;
        const auto doc = parsedJson(arch.out, &why);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QCOMPARE(doc.object()["cause"].toString(), QStringLiteral("wrong_architecture"));
        const Run archText = cli({"show", "foreign"}, dir.path());
        QVERIFY2(!archText.out.contains("Install the package that provides"),
                 archText.out.constData());
        // The loader never reads a foreign library's DT_NEEDED: neither does the report.
        QVERIFY2(archText.out.contains("not read by the loader"), archText.out.constData());
        QCOMPARE(doc.object()["library_dependencies"].toObject()["dependencies_read"].toBool(true),
                 false);

        // A cut-off library: its own cause and fix, refused before dlopen (no worker dies of
        // SIGBUS: `show` loads it in an inspection worker).
        const Run cutShow = cli({"show", "cut", "--json"}, dir.path());
        QCOMPARE(cutShow.code, 1);
        const auto cutDoc = parsedJson(cutShow.out, &why);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QCOMPARE(cutDoc.object()["cause"].toString(), QStringLiteral("library_truncated"));
        QVERIFY2(!cutShow.out.contains("crashed the inspection worker") &&
                     !cutShow.out.contains("hook_crashed"),
                 cutShow.out.constData());
        const Run cutText = cli({"show", "cut"}, dir.path());
        QVERIFY2(cutText.out.contains("Problem (library_truncated)") &&
                     cutText.out.contains("is cut off: its ") &&
                     cutText.out.contains("The file is shorter than its headers say: the copy "
                                          "or download was cut; reinstall"),
                 cutText.out.constData());

        const Run doctor = cli({"doctor", "--json"}, dir.path());
        const auto report = parsedJson(doctor.out, &why);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QStringList causes;
        QJsonArray foreignProblems, cutProblems;
        for (const auto& p : report.object()["problems"].toArray()) {
            const auto subject = p.toObject()["subject"].toString();
            if (subject == "newer-gcc")
                causes << p.toObject()["cause"].toString();
            if (subject == "foreign")
                foreignProblems.append(p);
            if (subject == "cut")
                cutProblems.append(p);
        }
        QVERIFY2(causes.contains("symbol_version_missing"), qPrintable(causes.join(", ")));
        // The aarch64 plugin: exactly one error (not one more per system library it "needs"),
        // with the architecture's fix; the cut-off one: one, with its own.
        QCOMPARE(foreignProblems.size(), 1);
        QCOMPARE(foreignProblems[0].toObject()["cause"].toString(),
                 QStringLiteral("wrong_architecture"));
        QCOMPARE(foreignProblems[0].toObject()["fix"].toString(),
                 QStringLiteral("Install the build of the plugin made for this machine's "
                                "architecture"));
        QCOMPARE(cutProblems.size(), 1);
        QCOMPARE(cutProblems[0].toObject()["cause"].toString(),
                 QStringLiteral("library_truncated"));
    }

    // Reports: a report that holds bytes that are not UTF-8 (in a key, a value, after an
    // escape) is refused with a message that is valid UTF-8 and names the file; the report
    // beside it is still read by compare and check, whose --json output stays valid.
    void hostileReportsNeverBreakJson() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QByteArray d = QFile::encodeName(dir.path());
        const QList<QByteArray> reports = {
            "{\"format\": \"switchyard.report\", \"rows\": [\"\\" + kEmoji + "\"]}",
            "{\"format\": \"switchyard.report\", \"\xFF\": 1}",
            "{\"format\": \"switchyard.report\", \"host\": \"\xC0\xAF\"}",
            "{\"format\": \"switchyard.report\"}" + QByteArray(1, '\0') + "\xFF",
        };
        for (int i = 0; i < reports.size(); ++i) {
            const QByteArray path = d + "/bad" + QByteArray::number(i) + ".json";
            QVERIFY(writeFile(path, reports[i]));
            for (const QString& command : {"compare", "check"}) {
                QStringList args{command, QFile::decodeName(path), QFile::decodeName(path),
                                 "--json"};
                if (command == "check")
                    args = QStringList{"check", QFile::decodeName(path), "--references",
                                       QFile::decodeName(path), "--json"};
                const Run r = cli(args);
                QCOMPARE(r.code, 2);
                QVERIFY2(isUtf8(r.err) && isUtf8(r.out), r.err.constData());
                QVERIFY2(r.err.contains("bad" + QByteArray::number(i) + ".json"),
                         r.err.constData());
                QVERIFY2(!r.err.contains("json.exception"), r.err.constData());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestCliHostile)
#include "tst_cli_hostile.moc"
