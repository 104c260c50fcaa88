// SPDX-License-Identifier: MIT
#include <switchyard/ui/backendcatalog.h>

#include <QMetaObject>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

namespace switchyard::ui {

BackendCatalog::BackendCatalog(BackendRegistry& registry, QObject* parent)
    : QObject(parent), m_registry(registry) {
    qRegisterMetaType<std::vector<switchyard::BackendInfo>>();
}

void BackendCatalog::refresh(bool rescan) {
    QPointer<BackendCatalog> self(this);
    auto& registry = m_registry;
    (void)QtConcurrent::run([self, &registry, rescan] {
        std::vector<BackendInfo> infos;
        QString error;
        try {
            if (rescan)
                registry.rescan();
            infos = registry.infos(InfoDetail::Full); // off the GUI thread: ELF files are read here
        } catch (const std::exception& e) {
            error = QString::fromUtf8(e.what());
        }
        if (!self)
            return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, infos = std::move(infos), error]() {
                if (!self)
                    return;
                if (error.isEmpty())
                    emit self->backendsAvailable(infos);
                else
                    emit self->backendsFailed(error);
            },
            Qt::QueuedConnection);
    });
}

} // namespace switchyard::ui
