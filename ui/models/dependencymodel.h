// SPDX-License-Identifier: MIT
#pragma once

#include "models/treemodel.h"

#include <switchyard/registry/backendregistry.h>

namespace switchyard::ui {

/// One backend's dependencies: its optional dependencies (found where, or what to
/// install) and its library's ELF dependency tree, unresolved sonames in red with the
/// folders the loader would have searched.
class DependencyModel : public TreeModel {
    Q_OBJECT
public:
    enum Columns { NameColumn, StatusColumn, WhereColumn, ColumnCount };
    /// FailsRole: the static load simulation says the loader stops at this object.
    enum Roles { SortRole = Qt::UserRole, FoundRole, FailsRole };

    explicit DependencyModel(QObject* parent = nullptr);
    /// nullptr clears the model.
    void setBackend(const BackendInfo* info);
};

} // namespace switchyard::ui
