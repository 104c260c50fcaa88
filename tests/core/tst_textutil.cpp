// SPDX-License-Identifier: MIT
// Tests for core/src/util/textutil.h: the one list splitter (search paths, PATH,
// LD_LIBRARY_PATH) and join.

#include "util/textutil.h"

#include <QTest>

#include <string>
#include <vector>

using namespace switchyard;

using Items = std::vector<std::string>;
Q_DECLARE_METATYPE(Items)

class TstTextUtil : public QObject {
    Q_OBJECT
private slots:
    void split_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("separators");
        QTest::addColumn<bool>("keepEmpty");
        QTest::addColumn<Items>("expected");
        QTest::newRow("empty") << ""
                               << ":" << false << Items{};
        QTest::newRow("empty kept") << ""
                                    << ":" << true << Items{""};
        QTest::newRow("one") << "a"
                             << ":" << false << Items{"a"};
        QTest::newRow("three") << "a:bb:c"
                               << ":" << false << Items{"a", "bb", "c"};
        QTest::newRow("empties dropped") << ":a::b:"
                                         << ":" << false << Items{"a", "b"};
        QTest::newRow("empties kept") << ":a::b:"
                                      << ":" << true << Items{"", "a", "", "b", ""};
        QTest::newRow("only separators") << "::"
                                         << ":" << false << Items{};
        QTest::newRow("two separators") << "a:b;c"
                                        << ":;" << false << Items{"a", "b", "c"};
        QTest::newRow("commas") << "gemm,triad"
                                << "," << false << Items{"gemm", "triad"};
        QTest::newRow("other separator untouched") << "a,b:c"
                                                   << ":" << false << Items{"a,b", "c"};
    }
    void split() {
        QFETCH(QString, text);
        QFETCH(QString, separators);
        QFETCH(bool, keepEmpty);
        QFETCH(Items, expected);
        const auto got = text::split(text.toStdString(), separators.toStdString(), keepEmpty);
        QCOMPARE(got, expected);
    }

    void joinRoundTrip() {
        const Items items{"a", "bb", "c"};
        QCOMPARE(text::join(items, ":"), std::string("a:bb:c"));
        QCOMPARE(text::split(text::join(items, ":"), ":"), items);
    }
};

QTEST_GUILESS_MAIN(TstTextUtil)
#include "tst_textutil.moc"
