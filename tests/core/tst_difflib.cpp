// SPDX-License-Identifier: MIT
// Tests for core/src/difflib: a port of CPython's difflib.get_close_matches and the parts
// of SequenceMatcher it uses. The table's expected values were produced by CPython 3.11's
// difflib and hard-coded; testDifferentialAgainstPython compares against a live python3
// on a few hundred generated cases when one is installed.

#include "util/difflib.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QStringList>
#include <QTest>

#include "support/childprocess.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace difflib = switchyard::difflib;

namespace {

std::vector<std::string> toStd(const QStringList& list) {
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(list.size()));
    for (const QString& s : list) {
        out.push_back(s.toStdString());
    }
    return out;
}

QStringList fromStd(const std::vector<std::string>& list) {
    QStringList out;
    for (const std::string& s : list) {
        out.push_back(QString::fromStdString(s));
    }
    return out;
}

QStringList backendNames() {
    return {QStringLiteral("cpu"),        QStringLiteral("cuda"),     QStringLiteral("opencl"),
            QStringLiteral("openblas"),   QStringLiteral("cpu-avx2"), QStringLiteral("cuda_sm90"),
            QStringLiteral("cpu-avx512"), QStringLiteral("rocm"),     QStringLiteral("vulkan"),
            QStringLiteral("metal"),      QStringLiteral("sycl")};
}

// Python 3.11's keyword.kwlist (used by the difflib docstring examples).
QStringList pythonKeywords() {
    return QStringLiteral("False None True and as assert async await break class continue def "
                          "del elif else except finally for from global if import in is lambda "
                          "nonlocal not or pass raise return try while with yield")
        .split(QLatin1Char(' '));
}

// The differential test's generator: std::mt19937's output sequence is fixed by the
// standard, and only its raw output is used (the <random> distributions are not portable).
class Generator {
public:
    explicit Generator(std::uint32_t seed) : engine_(seed) {}

    std::uint32_t below(std::uint32_t bound) {
        return static_cast<std::uint32_t>(engine_() % bound);
    }

    std::string randomString(const std::string& alphabet, std::uint32_t minLen,
                             std::uint32_t maxLen) {
        const std::uint32_t len = minLen + below(maxLen - minLen + 1);
        std::string s;
        for (std::uint32_t i = 0; i < len; ++i) {
            s.push_back(alphabet[below(static_cast<std::uint32_t>(alphabet.size()))]);
        }
        return s;
    }

    // Names glued from backend-like pieces, sometimes mutated: realistic near misses.
    std::string backendLike() {
        static const char* const pieces[] = {"cpu", "cuda", "open", "cl",   "blas",
                                             "avx", "2",    "512",  "sm",   "90",
                                             "80",  "_",    "-",    "rocm", "gpu"};
        std::string s;
        const std::uint32_t count = 1 + below(4);
        for (std::uint32_t i = 0; i < count; ++i) {
            s += pieces[below(std::size(pieces))];
        }
        if (!s.empty() && below(3) == 0) {
            const std::uint32_t at = below(static_cast<std::uint32_t>(s.size()));
            switch (below(3)) {
            case 0:
                s.erase(at, 1);
                break;
            case 1:
                s.insert(at, 1, static_cast<char>('a' + below(26)));
                break;
            default:
                s[at] = static_cast<char>('a' + below(26));
                break;
            }
        }
        return s;
    }

    std::string anyWord() {
        static const std::string alphabets[] = {"ab", "abc", "aab_", "abcdefghijklmnopqrstuvwxyz",
                                                "cpu-_0123456789"};
        switch (below(6)) {
        case 0:
        case 1:
        case 2:
            return backendLike();
        case 3: // long enough for the autojunk heuristic when it is the word
            return randomString(alphabets[below(3)], 200, 320);
        default:
            return randomString(alphabets[below(std::size(alphabets))], 0, 12);
        }
    }

private:
    std::mt19937 engine_;
};

// Reads JSON cases on stdin, answers with JSON: get_close_matches results and ratios
// (as float.hex, so they compare exactly).
const char* const kPythonScript = R"PY(
import difflib, json, sys
data = json.load(sys.stdin)
out = {"matches": [], "ratios": []}
for c in data["cases"]:
    out["matches"].append(difflib.get_close_matches(c["word"], c["cands"], c["n"], c["cutoff_pct"] / 100))
for a, b in data["pairs"]:
    out["ratios"].append(difflib.SequenceMatcher(None, a, b).ratio().hex())
json.dump(out, sys.stdout)
)PY";

} // namespace

class TestDifflib : public QObject {
    Q_OBJECT

private slots:
    void testGetCloseMatches_data();
    void testGetCloseMatches();
    void testDefaults();
    void testRatio_data();
    void testRatio();
    void testSequenceMatcher();
    void testInvalidArguments();
    void testDifferentialAgainstPython();
};

void TestDifflib::testGetCloseMatches_data() {
    QTest::addColumn<QString>("word");
    QTest::addColumn<QStringList>("candidates");
    QTest::addColumn<int>("n");
    QTest::addColumn<double>("cutoff");
    QTest::addColumn<QStringList>("expected");

    // Generated with CPython 3.11: difflib.get_close_matches(word, candidates, n, cutoff).
    // Equal scores come out in descending string order (heapq.nlargest on (score, x)).
    // long_word_autojunk_periodic: every letter of the 250-character word is "popular", so
    // "x" + "abcde"*8 scores 0.0 (0.2749 with autojunk=False) and ranks last.
    // long_candidate_no_autojunk: autojunk only looks at the word (seq2), never at a candidate.
    QTest::newRow("backend_typo_cdua") << QStringLiteral("cdua") << backendNames() << 2 << 0.6
                                       << QStringList{QStringLiteral("cuda")};
    QTest::newRow("backend_typo_cuda_n3")
        << QStringLiteral("cuda") << backendNames() << 3 << 0.6
        << QStringList{QStringLiteral("cuda"), QStringLiteral("cuda_sm90")};
    QTest::newRow("backend_exact_opencl")
        << QStringLiteral("opencl") << backendNames() << 2 << 0.6
        << QStringList{QStringLiteral("opencl"), QStringLiteral("openblas")};
    QTest::newRow("backend_openbls")
        << QStringLiteral("openbls") << backendNames() << 2 << 0.6
        << QStringList{QStringLiteral("openblas"), QStringLiteral("opencl")};
    QTest::newRow("backend_cpu_avx2_underscore")
        << QStringLiteral("cpu_avx2") << backendNames() << 3 << 0.6
        << QStringList{QStringLiteral("cpu-avx2"), QStringLiteral("cpu-avx512")};
    QTest::newRow("backend_cuda_sm9")
        << QStringLiteral("cuda_sm9") << backendNames() << 2 << 0.6
        << QStringList{QStringLiteral("cuda_sm90"), QStringLiteral("cuda")};
    QTest::newRow("backend_gpu") << QStringLiteral("gpu") << backendNames() << 3 << 0.5
                                 << QStringList{QStringLiteral("cpu")};
    QTest::newRow("backend_cuda_n1") << QStringLiteral("cuda") << backendNames() << 1 << 0.6
                                     << QStringList{QStringLiteral("cuda")};
    QTest::newRow("backend_cutoff0_n3")
        << QStringLiteral("cuda") << backendNames() << 3 << 0.0
        << QStringList{QStringLiteral("cuda"), QStringLiteral("cuda_sm90"), QStringLiteral("cpu")};
    QTest::newRow("backend_cutoff0_all")
        << QStringLiteral("cpu") << backendNames() << 20 << 0.0
        << QStringList{QStringLiteral("cpu"),       QStringLiteral("cuda"),
                       QStringLiteral("cpu-avx2"),  QStringLiteral("cpu-avx512"),
                       QStringLiteral("cuda_sm90"), QStringLiteral("sycl"),
                       QStringLiteral("rocm"),      QStringLiteral("vulkan"),
                       QStringLiteral("opencl"),    QStringLiteral("openblas"),
                       QStringLiteral("metal")};
    QTest::newRow("backend_cutoff1_exact") << QStringLiteral("rocm") << backendNames() << 3 << 1.0
                                           << QStringList{QStringLiteral("rocm")};
    QTest::newRow("backend_cutoff1_none")
        << QStringLiteral("rocn") << backendNames() << 3 << 1.0 << QStringList{};
    QTest::newRow("backend_uppercase")
        << QStringLiteral("CUDA") << backendNames() << 3 << 0.0
        << QStringList{QStringLiteral("vulkan"), QStringLiteral("sycl"), QStringLiteral("rocm")};
    QTest::newRow("backend_space")
        << QStringLiteral("cuda sm90") << backendNames() << 2 << 0.6
        << QStringList{QStringLiteral("cuda_sm90"), QStringLiteral("cuda")};
    QTest::newRow("sm_versions") << QStringLiteral("sm_87")
                                 << QStringList{QStringLiteral("sm_80"),  QStringLiteral("sm_86"),
                                                QStringLiteral("sm_89"),  QStringLiteral("sm_90"),
                                                QStringLiteral("sm_90a"), QStringLiteral("sm_75")}
                                 << 3 << 0.6
                                 << QStringList{QStringLiteral("sm_89"), QStringLiteral("sm_86"),
                                                QStringLiteral("sm_80")};
    QTest::newRow("empty_word_with_empty_cand")
        << QStringLiteral("")
        << QStringList{QStringLiteral(""), QStringLiteral("a"), QStringLiteral("cpu")} << 3 << 0.0
        << QStringList{QStringLiteral(""), QStringLiteral("cpu"), QStringLiteral("a")};
    QTest::newRow("empty_word_default_cutoff")
        << QStringLiteral("") << QStringList{QStringLiteral("a"), QStringLiteral("cpu")} << 2 << 0.6
        << QStringList{};
    QTest::newRow("empty_candidates")
        << QStringLiteral("cuda") << QStringList{} << 3 << 0.0 << QStringList{};
    QTest::newRow("empty_candidate_string")
        << QStringLiteral("cuda") << QStringList{QStringLiteral(""), QStringLiteral("cud")} << 3
        << 0.0 << QStringList{QStringLiteral("cud"), QStringLiteral("")};
    QTest::newRow("ties_descending")
        << QStringLiteral("abc")
        << QStringList{QStringLiteral("abd"), QStringLiteral("abe"), QStringLiteral("abf"),
                       QStringLiteral("xbc"), QStringLiteral("ayc")}
        << 3 << 0.6
        << QStringList{QStringLiteral("xbc"), QStringLiteral("ayc"), QStringLiteral("abf")};
    QTest::newRow("ties_all") << QStringLiteral("abc")
                              << QStringList{QStringLiteral("abd"), QStringLiteral("abe"),
                                             QStringLiteral("abf"), QStringLiteral("xbc"),
                                             QStringLiteral("ayc")}
                              << 10 << 0.6
                              << QStringList{QStringLiteral("xbc"), QStringLiteral("ayc"),
                                             QStringLiteral("abf"), QStringLiteral("abe"),
                                             QStringLiteral("abd")};
    QTest::newRow("ties_case") << QStringLiteral("cuda")
                               << QStringList{QStringLiteral("Cuda"), QStringLiteral("cUda"),
                                              QStringLiteral("cuDa"), QStringLiteral("cudA")}
                               << 4 << 0.5
                               << QStringList{QStringLiteral("cudA"), QStringLiteral("cuDa"),
                                              QStringLiteral("cUda"), QStringLiteral("Cuda")};
    QTest::newRow("ties_mixed_lengths") << QStringLiteral("ab")
                                        << QStringList{QStringLiteral("a"), QStringLiteral("b"),
                                                       QStringLiteral("abab"), QStringLiteral("ba")}
                                        << 4 << 0.0
                                        << QStringList{QStringLiteral("b"), QStringLiteral("abab"),
                                                       QStringLiteral("a"), QStringLiteral("ba")};
    QTest::newRow("duplicates") << QStringLiteral("cuda")
                                << QStringList{QStringLiteral("cuda"), QStringLiteral("cudb"),
                                               QStringLiteral("cuda"), QStringLiteral("cudb")}
                                << 3 << 0.6
                                << QStringList{QStringLiteral("cuda"), QStringLiteral("cuda"),
                                               QStringLiteral("cudb")};
    QTest::newRow("repeated_chars")
        << QStringLiteral("aaaa")
        << QStringList{QStringLiteral("aaa"), QStringLiteral("aaaaa"),    QStringLiteral("aa"),
                       QStringLiteral("a"),   QStringLiteral("aaaaaaaa"), QStringLiteral("b")}
        << 3 << 0.5
        << QStringList{QStringLiteral("aaaaa"), QStringLiteral("aaa"), QStringLiteral("aaaaaaaa")};
    QTest::newRow("repeated_pattern")
        << QStringLiteral("abababab")
        << QStringList{QStringLiteral("babababa"), QStringLiteral("aabbaabb"),
                       QStringLiteral("abab"), QStringLiteral("abababababab")}
        << 3 << 0.5
        << QStringList{QStringLiteral("babababa"), QStringLiteral("abababababab"),
                       QStringLiteral("aabbaabb")};
    QTest::newRow("anagram_quick_ratio_filter")
        << QStringLiteral("cuda")
        << QStringList{QStringLiteral("aduc"), QStringLiteral("dacu"), QStringLiteral("ucad"),
                       QStringLiteral("cuad")}
        << 4 << 0.6 << QStringList{QStringLiteral("cuad")};
    QTest::newRow("cutoff_equal_to_score")
        << QStringLiteral("abcd") << QStringList{QStringLiteral("bcde"), QStringLiteral("xyzw")}
        << 2 << 0.75 << QStringList{QStringLiteral("bcde")};
    QTest::newRow("cutoff_just_above_score")
        << QStringLiteral("abcd") << QStringList{QStringLiteral("bcde"), QStringLiteral("xyzw")}
        << 2 << 0.7500001 << QStringList{};
    QTest::newRow("single_char_word")
        << QStringLiteral("c")
        << QStringList{QStringLiteral("cpu"), QStringLiteral("c"), QStringLiteral("cl"),
                       QStringLiteral("x")}
        << 3 << 0.0
        << QStringList{QStringLiteral("c"), QStringLiteral("cl"), QStringLiteral("cpu")};
    QTest::newRow("python_doc_appel")
        << QStringLiteral("appel")
        << QStringList{QStringLiteral("ape"), QStringLiteral("apple"), QStringLiteral("peach"),
                       QStringLiteral("puppy")}
        << 3 << 0.6 << QStringList{QStringLiteral("apple"), QStringLiteral("ape")};
    QTest::newRow("python_doc_wheel") << QStringLiteral("wheel") << pythonKeywords() << 3 << 0.6
                                      << QStringList{QStringLiteral("while")};
    QTest::newRow("python_doc_Apple")
        << QStringLiteral("Apple") << pythonKeywords() << 3 << 0.6 << QStringList{};
    QTest::newRow("python_doc_accept") << QStringLiteral("accept") << pythonKeywords() << 3 << 0.6
                                       << QStringList{QStringLiteral("except")};
    QTest::newRow("keywords_n2_low_cutoff")
        << QStringLiteral("retrun") << pythonKeywords() << 2 << 0.3
        << QStringList{QStringLiteral("return"), QStringLiteral("try")};
    QTest::newRow("long_candidate_no_autojunk")
        << QStringLiteral("cuda_sm90")
        << QStringList{QStringLiteral("cuda_") + QStringLiteral("sm90_").repeated(45),
                       QStringLiteral("cuda_sm90x"), QStringLiteral("cuda")}
        << 3 << 0.0
        << QStringList{QStringLiteral("cuda_sm90x"), QStringLiteral("cuda"),
                       QStringLiteral("cuda_") + QStringLiteral("sm90_").repeated(45)};
    QTest::newRow("long_word_autojunk_periodic")
        << QStringLiteral("abcde").repeated(50)
        << QStringList{QStringLiteral("abcde").repeated(50),
                       QStringLiteral("x") + QStringLiteral("abcde").repeated(8),
                       QStringLiteral("abcde").repeated(20), QStringLiteral("abcde")}
        << 4 << 0.0
        << QStringList{QStringLiteral("abcde").repeated(50), QStringLiteral("abcde").repeated(20),
                       QStringLiteral("abcde"),
                       QStringLiteral("x") + QStringLiteral("abcde").repeated(8)};
    QTest::newRow("long_word_autojunk_openblas")
        << QStringLiteral("openblas").repeated(26)
        << QStringList{QStringLiteral("openblas").repeated(26).chopped(1),
                       QStringLiteral("openblas").repeated(26).mid(3) + QStringLiteral("xyz"),
                       QStringLiteral("openblas"), QStringLiteral("OPENBLAS").repeated(26)}
        << 4 << 0.0
        << QStringList{QStringLiteral("openblas").repeated(26).chopped(1),
                       QStringLiteral("openblas"),
                       QStringLiteral("openblas").repeated(26).mid(3) + QStringLiteral("xyz"),
                       QStringLiteral("OPENBLAS").repeated(26)};
    QTest::newRow("long_word_and_candidate")
        << QString(199, u'a') + QString(21, u'b')
        << QStringList{QString(220, u'a'), QString(220, u'b'), QStringLiteral("ab").repeated(110)}
        << 3 << 0.0
        << QStringList{QString(220, u'a'), QStringLiteral("ab").repeated(110), QString(220, u'b')};
    QTest::newRow("digits_and_punct")
        << QStringLiteral("cpu-avx512f")
        << QStringList{QStringLiteral("cpu-avx512"), QStringLiteral("cpu-avx2"),
                       QStringLiteral("cpu_avx512f"), QStringLiteral("avx512f")}
        << 3 << 0.6
        << QStringList{QStringLiteral("cpu-avx512"), QStringLiteral("cpu_avx512f"),
                       QStringLiteral("cpu-avx2")};
}

void TestDifflib::testGetCloseMatches() {
    QFETCH(QString, word);
    QFETCH(QStringList, candidates);
    QFETCH(int, n);
    QFETCH(double, cutoff);
    QFETCH(QStringList, expected);

    const std::vector<std::string> got = difflib::get_close_matches(
        word.toStdString(), toStd(candidates), static_cast<std::size_t>(n), cutoff);
    QCOMPARE(fromStd(got), expected);
}

void TestDifflib::testDefaults() {
    // This API's defaults are n = 2, cutoff = 0.6 (Python's n defaults to 3).
    const std::vector<std::string> candidates = {"ape", "apple", "peach", "puppy", "appl"};
    QCOMPARE(fromStd(difflib::get_close_matches("appel", candidates)),
             (QStringList{QStringLiteral("appl"), QStringLiteral("apple")}));
    QCOMPARE(fromStd(difflib::get_close_matches("appel", candidates, 3)),
             (QStringList{QStringLiteral("appl"), QStringLiteral("apple"), QStringLiteral("ape")}));
}

void TestDifflib::testRatio_data() {
    QTest::addColumn<QString>("a");
    QTest::addColumn<QString>("b");
    QTest::addColumn<double>("expected");

    // difflib.SequenceMatcher(None, a, b).ratio() from CPython 3.11.
    QTest::newRow("doc_abcd_bcde") << QStringLiteral("abcd") << QStringLiteral("bcde") << 0.75;
    QTest::newRow("both_empty") << QString() << QString() << 1.0;
    QTest::newRow("one_empty") << QString() << QStringLiteral("a") << 0.0;
    QTest::newRow("cuda_cdua") << QStringLiteral("cuda") << QStringLiteral("cdua") << 0.75;
    QTest::newRow("openblas_openbls")
        << QStringLiteral("openblas") << QStringLiteral("openbls") << 0.9333333333333333;
    QTest::newRow("cpu_avx2") << QStringLiteral("cpu-avx2") << QStringLiteral("cpu_avx2") << 0.875;
    QTest::newRow("abxcd_abcd") << QStringLiteral("abxcd") << QStringLiteral("abcd")
                                << 0.8888888888888888;
    QTest::newRow("repeated") << QStringLiteral("aaaa") << QStringLiteral("aa")
                              << 0.6666666666666666;
    QTest::newRow("doc_thread") << QStringLiteral("private Thread currentThread;")
                                << QStringLiteral("private volatile Thread currentThread;")
                                << 0.8656716417910447;
    // b has 250 elements, all popular: autojunk leaves nothing to start a match on.
    QTest::newRow("autojunk_b") << QStringLiteral("x") + QStringLiteral("abcde").repeated(8)
                                << QStringLiteral("abcde").repeated(50) << 0.0;
    // len(b) == 200, ntest == 3: four 'b's are popular (no match can start there), three
    // are not.
    QTest::newRow("autojunk_boundary_4")
        << QStringLiteral("xb") << QString(196, u'c') + QStringLiteral("bbbb") << 0.0;
    QTest::newRow("autojunk_boundary_3")
        << QStringLiteral("xb") << QString(197, u'c') + QStringLiteral("bbb")
        << 0.009900990099009901;
    // The same pair swapped: b is short, so no autojunk.
    QTest::newRow("autojunk_swapped")
        << QStringLiteral("abcde").repeated(50)
        << QStringLiteral("x") + QStringLiteral("abcde").repeated(8) << 0.27491408934707906;
}

void TestDifflib::testRatio() {
    QFETCH(QString, a);
    QFETCH(QString, b);
    QFETCH(double, expected);

    const double got = difflib::ratio(a.toStdString(), b.toStdString());
    // Exact: the port does the same integer counting and the same final division.
    QVERIFY2(
        got == expected,
        qPrintable(
            QStringLiteral("got %1, expected %2").arg(got, 0, 'g', 17).arg(expected, 0, 'g', 17)));
}

void TestDifflib::testSequenceMatcher() {
    using difflib::match;
    using difflib::sequence_matcher;

    // The examples of CPython's SequenceMatcher docstrings.
    {
        const sequence_matcher s({}, " abcd", "abcd abcd");
        QVERIFY((s.find_longest_match(0, 5, 0, 9) == match{0, 4, 5}));
    }
    {
        const sequence_matcher s([](char c) { return c == ' '; }, " abcd", "abcd abcd");
        QVERIFY((s.find_longest_match(0, 5, 0, 9) == match{1, 0, 4}));
        QVERIFY(s.is_bjunk(' '));
        QVERIFY(!s.is_bjunk('a'));
    }
    {
        const sequence_matcher s({}, "ab", "c");
        QVERIFY((s.find_longest_match(0, 2, 0, 1) == match{0, 0, 0}));
    }
    {
        const sequence_matcher s({}, "abxcd", "abcd");
        const std::vector<match> expected = {{0, 0, 2}, {3, 2, 2}, {5, 4, 0}};
        QVERIFY(s.get_matching_blocks() == expected);
    }
    {
        sequence_matcher s({}, "abcd", "bcde");
        QCOMPARE(s.ratio(), 0.75);
        QCOMPARE(s.quick_ratio(), 0.75);
        QCOMPARE(s.real_quick_ratio(), 1.0);
        s.set_seq1("bcde");
        QCOMPARE(s.ratio(), 1.0);
    }
    {
        // SequenceMatcher(lambda x: x == " ", "private Thread currentThread;",
        //                 "private volatile Thread currentThread;") from CPython 3.11.
        const sequence_matcher s([](char c) { return c == ' '; }, "private Thread currentThread;",
                                 "private volatile Thread currentThread;");
        QVERIFY(s.ratio() == 0.8656716417910447);
        const std::vector<match> expected = {{0, 0, 8}, {8, 17, 21}, {29, 38, 0}};
        QVERIFY(s.get_matching_blocks() == expected);
    }
    {
        // autojunk: in a 250-element b every letter occurs 50 > 250 // 100 + 1 times.
        const std::string b(250, 'a');
        const sequence_matcher withAutojunk({}, "aaa", b);
        QVERIFY(withAutojunk.is_bpopular('a'));
        const sequence_matcher withoutAutojunk({}, "aaa", b, false);
        QVERIFY(!withoutAutojunk.is_bpopular('a'));
        // Popular elements still extend a match: a[0:3] == b[0:3] either way.
        QVERIFY((withAutojunk.find_longest_match() == match{0, 0, 3}));
        QVERIFY((withoutAutojunk.find_longest_match() == match{0, 0, 3}));
        // 199 elements: below the threshold, nothing is popular.
        const sequence_matcher small({}, "aaa", std::string(199, 'a'));
        QVERIFY(!small.is_bpopular('a'));
        // len(b) == 200: ntest = 200 // 100 + 1 = 3; popular means strictly more than 3.
        const sequence_matcher boundary(
            {}, "x", std::string(3, 'a') + std::string(4, 'b') + std::string(193, 'c'));
        QVERIFY(!boundary.is_bpopular('a'));
        QVERIFY(boundary.is_bpopular('b'));
        QVERIFY(boundary.is_bpopular('c'));
    }
}

void TestDifflib::testInvalidArguments() {
    const std::vector<std::string> candidates = {"cpu", "cuda"};
    const auto messageOf = [&](std::size_t n, double cutoff) -> std::string {
        try {
            difflib::get_close_matches("cpu", candidates, n, cutoff);
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return {};
    };

    QVERIFY(messageOf(0, 0.6).find("n must be > 0") != std::string::npos);
    QVERIFY(messageOf(1, -0.1).find("cutoff must be in [0.0, 1.0]") != std::string::npos);
    QVERIFY(messageOf(1, 1.0000001).find("cutoff must be in [0.0, 1.0]") != std::string::npos);
    QVERIFY(messageOf(1, std::numeric_limits<double>::quiet_NaN()).find("cutoff must be in") !=
            std::string::npos);
    QVERIFY(messageOf(1, std::numeric_limits<double>::infinity()).find("cutoff must be in") !=
            std::string::npos);
    // The bounds themselves are valid.
    QVERIFY(messageOf(1, 0.0).empty());
    QVERIFY(messageOf(1, 1.0).empty());
    // Arguments are checked even when there is nothing to match.
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, difflib::get_close_matches("x", {}, 0));
}

void TestDifflib::testDifferentialAgainstPython() {
    const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
    if (python.isEmpty()) {
        QSKIP("python3 is not on PATH: the differential test against CPython's difflib needs it");
    }

    struct Case {
        std::string word;
        std::vector<std::string> candidates;
        std::size_t n;
        int cutoffPct;
    };
    Generator gen(20240611u);
    std::vector<Case> cases;
    std::vector<std::pair<std::string, std::string>> pairs;
    static const int cutoffs[] = {0, 25, 50, 60, 60, 60, 75, 90, 100};
    for (int i = 0; i < 400; ++i) {
        Case c;
        c.word = gen.anyWord();
        const std::uint32_t count = gen.below(16);
        for (std::uint32_t k = 0; k < count; ++k) {
            // Near copies of the word, some exact, so that the cutoff and the ties matter.
            switch (gen.below(4)) {
            case 0:
                c.candidates.push_back(gen.below(4) == 0 ? c.word
                                                         : c.word + gen.randomString("ab_", 0, 2));
                break;
            case 1:
                if (!c.candidates.empty()) { // a duplicate
                    c.candidates.push_back(
                        c.candidates[gen.below(static_cast<std::uint32_t>(c.candidates.size()))]);
                    break;
                }
                [[fallthrough]];
            default:
                c.candidates.push_back(gen.anyWord());
                break;
            }
        }
        c.n = 1 + gen.below(5);
        c.cutoffPct = gen.below(4) == 0 ? static_cast<int>(gen.below(101))
                                        : cutoffs[gen.below(std::size(cutoffs))];
        cases.push_back(std::move(c));
    }
    for (int i = 0; i < 200; ++i) {
        pairs.emplace_back(gen.anyWord(), gen.anyWord());
    }

    QJsonArray jsonCases;
    for (const Case& c : cases) {
        QJsonObject o;
        o.insert(QStringLiteral("word"), QString::fromStdString(c.word));
        o.insert(QStringLiteral("cands"), QJsonArray::fromStringList(fromStd(c.candidates)));
        o.insert(QStringLiteral("n"), static_cast<int>(c.n));
        o.insert(QStringLiteral("cutoff_pct"), c.cutoffPct);
        jsonCases.append(o);
    }
    QJsonArray jsonPairs;
    for (const auto& [a, b] : pairs) {
        jsonPairs.append(QJsonArray{QString::fromStdString(a), QString::fromStdString(b)});
    }
    QJsonObject input;
    input.insert(QStringLiteral("cases"), jsonCases);
    input.insert(QStringLiteral("pairs"), jsonPairs);

    const auto proc = switchyard::test::run_process(
        python, {QStringLiteral("-c"), QString::fromLatin1(kPythonScript)},
        {.input = QJsonDocument(input).toJson(QJsonDocument::Compact),
         .has_input = true,
         .timeout_ms = 120000});
    QVERIFY2(proc.started, proc.err.constData());
    QVERIFY2(proc.finished, "python3 did not finish");
    QVERIFY2(proc.code == 0, proc.err.constData());

    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(proc.out, &parseError);
    QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
    const QJsonArray matches = doc.object().value(QStringLiteral("matches")).toArray();
    const QJsonArray ratios = doc.object().value(QStringLiteral("ratios")).toArray();
    QCOMPARE(matches.size(), static_cast<qsizetype>(cases.size()));
    QCOMPARE(ratios.size(), static_cast<qsizetype>(pairs.size()));

    for (std::size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        QStringList expected;
        for (const QJsonValue& v : matches.at(static_cast<qsizetype>(i)).toArray()) {
            expected.push_back(v.toString());
        }
        const QStringList got =
            fromStd(difflib::get_close_matches(c.word, c.candidates, c.n, c.cutoffPct / 100.0));
        QVERIFY2(got == expected,
                 qPrintable(QStringLiteral("case %1: word \"%2\", n %3, cutoff %4/100: got [%5], "
                                           "python [%6]")
                                .arg(i)
                                .arg(QString::fromStdString(c.word))
                                .arg(c.n)
                                .arg(c.cutoffPct)
                                .arg(got.join(QStringLiteral(", ")),
                                     expected.join(QStringLiteral(", ")))));
    }
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        const std::string hex = ratios.at(static_cast<qsizetype>(i)).toString().toStdString();
        const double expected = std::strtod(hex.c_str(), nullptr);
        const double got = difflib::ratio(pairs[i].first, pairs[i].second);
        QVERIFY2(got == expected, qPrintable(QStringLiteral("pair %1: got %2, python %3")
                                                 .arg(i)
                                                 .arg(got, 0, 'g', 17)
                                                 .arg(QString::fromStdString(hex))));
    }
}

QTEST_GUILESS_MAIN(TestDifflib)
#include "tst_difflib.moc"
