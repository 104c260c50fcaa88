// SPDX-License-Identifier: MIT
// switchyard: the GUI.
#include <switchyard/registry/backendregistry.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/sdk/version.h>
#include <switchyard/ui/mainwindow.h>

#include <QApplication>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Switchyard"));
    QApplication::setApplicationVersion(QString::fromUtf8(switchyard::core_version().data()));
    switchyard::ui::MainWindow window(switchyard::default_backends());
    window.show();
    return QApplication::exec();
}
