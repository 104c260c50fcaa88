// SPDX-License-Identifier: MIT
// switchyard: the GUI. Parses the command line and wires the window to the process-wide
// registries; --screenshot DIR saves one PNG per panel once everything is shown, then quits.
#include "mainwindow.h"
#include "views/backendtreeview.h"
#include "views/kernelmatrixview.h"

#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/sdk/version.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include <cstdio>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Switchyard"));
    QApplication::setApplicationName(QStringLiteral("Switchyard"));
    QApplication::setApplicationVersion(QString::fromUtf8(switchyard::core_version().data()));
    QApplication::setDesktopFileName(QStringLiteral("switchyard"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Switchyard: compute backend explorer"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QStringLiteral("Save one PNG per panel into DIR and quit."),
                                        QStringLiteral("DIR"));
    const QCommandLineOption prefix(QStringLiteral("screenshot-prefix"),
                                    QStringLiteral("File name prefix of the screenshots."),
                                    QStringLiteral("PREFIX"), QStringLiteral("switchyard"));
    const QCommandLineOption select(QStringLiteral("select"),
                                    QStringLiteral("Select backend NAME."), QStringLiteral("NAME"));
    const QCommandLineOption target(QStringLiteral("target"),
                                    QStringLiteral("Kernel matrix target (cuda:sm_90, cpu, ...)."),
                                    QStringLiteral("TARGET"));
    const QCommandLineOption op(QStringLiteral("op"),
                                QStringLiteral("Highlight OP's fallback chain."),
                                QStringLiteral("OP"));
    parser.addOptions({screenshot, prefix, select, target, op});
    parser.process(app);

    switchyard::ui::MainWindow window(switchyard::default_backends(), switchyard::default_devices(),
                                      switchyard::PluginSearchPath::from_environment());
    window.show();
    if (parser.isSet(screenshot)) {
        window.resize(1280, 780);
        QObject::connect(&window, &switchyard::ui::MainWindow::catalogShown, &window, [&] {
            if (parser.isSet(select))
                window.backendTree()->selectBackend(parser.value(select));
            if (parser.isSet(op))
                window.matrixView()->setSelectedOp(parser.value(op));
            if (parser.isSet(target))
                window.matrixView()->setTarget(parser.value(target));
            // Let the resolution for the target arrive, then take the pictures.
            QTimer::singleShot(1500, &window, [&] {
                for (const auto& p :
                     window.saveScreenshots(parser.value(screenshot), parser.value(prefix)))
                    std::printf("%s\n", qPrintable(p));
                QApplication::quit();
            });
        });
    }
    return QApplication::exec();
}
