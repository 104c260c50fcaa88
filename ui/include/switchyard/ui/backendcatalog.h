// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/registry/backendregistry.h>

#include <QObject>
#include <QString>

#include <vector>

Q_DECLARE_METATYPE(std::vector<switchyard::BackendInfo>)

namespace switchyard::ui {

/// Runs registry work (built-ins, plugin discovery, dependency checks) off the GUI thread
/// and reports back with signals.
class BackendCatalog : public QObject {
    Q_OBJECT
public:
    explicit BackendCatalog(BackendRegistry& registry, QObject* parent = nullptr);

    /// Starts a refresh; emits backendsAvailable() or backendsFailed() when done.
    void refresh(bool rescan = false);

signals:
    void backendsAvailable(const std::vector<switchyard::BackendInfo>& backends);
    void backendsFailed(const QString& error);

private:
    BackendRegistry& m_registry;
};

} // namespace switchyard::ui
