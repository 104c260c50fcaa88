// SPDX-License-Identifier: MIT
#include <switchyard/diagnosis/dependencies.h>

#include <QtTest>

using namespace switchyard;

class TestDependencies : public QObject {
    Q_OBJECT
private slots:
    void init() { clear_dependency_cache(); }

    void checksEachKind_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("kind");
        QTest::addColumn<bool>("found");
        QTest::addColumn<QString>("where"); // a fragment of location (found) or detail (missing)
        const auto L = int(DependencyKind::Library), F = int(DependencyKind::File),
                   X = int(DependencyKind::Executable), E = int(DependencyKind::Env);
        QTest::newRow("library found") << "libc.so.6" << L << true << "libc.so.6";
        QTest::newRow("library missing")
            << "libswitchyard-no-such-library.so.7" << L << false
            << "the dynamic loader cannot resolve libswitchyard-no-such-library.so.7";
        QTest::newRow("library by path")
            << SWITCHYARD_FIXTURE_DIR "/plugins/good/libswitchyard-fixture-good.so" << L << true
            << "libswitchyard-fixture-good.so";
        QTest::newRow("file found")
            << SWITCHYARD_SOURCE_DIR "/CMakeLists.txt" << F << true << "CMakeLists.txt";
        QTest::newRow("file missing")
            << "/nonexistent/switchyard.conf" << F << false << "no such file";
        QTest::newRow("executable found") << "sh" << X << true << "/sh";
        QTest::newRow("executable missing")
            << "switchyard-no-such-tool" << X << false << "is not on PATH";
        QTest::newRow("executable by path, not executable")
            << SWITCHYARD_SOURCE_DIR "/CMakeLists.txt" << X << false << "not an executable file";
        QTest::newRow("env found") << "SWITCHYARD_TEST_DEP_SET" << E << true << "yes";
        QTest::newRow("env missing") << "SWITCHYARD_TEST_DEP_UNSET" << E << false << "is not set";
        QTest::newRow("env empty") << "SWITCHYARD_TEST_DEP_EMPTY" << E << false << "is not set";
    }
    void checksEachKind() {
        QFETCH(QString, name);
        QFETCH(int, kind);
        QFETCH(bool, found);
        QFETCH(QString, where);
        qputenv("SWITCHYARD_TEST_DEP_SET", "yes");
        qputenv("SWITCHYARD_TEST_DEP_EMPTY", "");
        qunsetenv("SWITCHYARD_TEST_DEP_UNSET");
        const Dependency dep{name.toStdString(), DependencyKind(kind), "the hint"};
        const auto status = check_dependency(dep);
        QCOMPARE(status.found, found);
        QCOMPARE(status.dependency.hint, std::string("the hint"));
        const auto text = QString::fromStdString(found ? status.location : status.detail);
        QVERIFY2(text.contains(where), qPrintable(text));
    }

    void libraryFollowsLdLibraryPath() {
        const QByteArray saved = qgetenv("LD_LIBRARY_PATH");
        const Dependency dep{"libswitchyard-nonexistent-dep.so.1", DependencyKind::Library, ""};
        QVERIFY(!check_dependency(dep).found); // built, but in a folder nothing searches
        qputenv("LD_LIBRARY_PATH", SWITCHYARD_FIXTURE_DIR "/plugins-unshipped");
        const auto status = check_dependency(dep);
        qputenv("LD_LIBRARY_PATH", saved);
        QVERIFY(status.found);
        QVERIFY(QString::fromStdString(status.location)
                    .endsWith("plugins-unshipped/libswitchyard-nonexistent-dep.so.1"));
    }

    void cachedUntilCleared() {
        const Dependency dep{"SWITCHYARD_TEST_DEP_CACHED", DependencyKind::Env, "first hint"};
        qunsetenv("SWITCHYARD_TEST_DEP_CACHED");
        QVERIFY(!check_dependency_cached(dep).found);
        qputenv("SWITCHYARD_TEST_DEP_CACHED", "1");
        auto again = dep;
        again.hint = "second hint";
        const auto cached = check_dependency_cached(again);
        QVERIFY(!cached.found);                                       // cached
        QCOMPARE(cached.dependency.hint, std::string("second hint")); // but this declaration's hint
        clear_dependency_cache();
        QVERIFY(check_dependency_cached(dep).found);
        const auto all = check_dependencies({dep, {"libc.so.6", DependencyKind::Library, ""}});
        QCOMPARE(all.size(), std::size_t(2));
        QVERIFY(all[0].found && all[1].found);
    }
};

QTEST_GUILESS_MAIN(TestDependencies)
#include "tst_dependencies.moc"
