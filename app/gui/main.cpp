// SPDX-License-Identifier: MIT
// switchyard: the GUI.
#include <switchyard/backendregistry.h>
#include <switchyard/ui/mainwindow.h>
#include <switchyard/version.h>

#include <QApplication>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Switchyard"));
    QApplication::setApplicationVersion(QString::fromUtf8(switchyard::core_version().data()));
    switchyard::ui::MainWindow window(switchyard::BackendRegistry::instance());
    window.show();
    return QApplication::exec();
}
