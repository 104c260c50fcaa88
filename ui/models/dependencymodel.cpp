// SPDX-License-Identifier: MIT
#include "models/dependencymodel.h"

#include "models/qtstring.h"
#include "models/tone.h"

#include <QFont>

#include <map>

namespace switchyard::ui {

DependencyModel::DependencyModel(QObject* parent)
    : TreeModel({tr("Dependency"), tr("Status"), tr("Where found / what to install")}, parent) {}

void DependencyModel::setBackend(const BackendInfo* info) {
    beginBuild();
    if (info) {
        QFont bold;
        bold.setBold(true);
        const int opt =
            addNode(kRoot, {tr("Optional dependencies"),
                            tr("%n declared", nullptr, int(info->dependencies.size()))});
        setCellRole(opt, NameColumn, Qt::FontRole, bold);
        for (const auto& d : info->dependencies) {
            const QString where =
                d.found ? qs(d.location)
                        : qs(d.dependency.hint) + (d.detail.empty()
                                                       ? QString()
                                                       : QStringLiteral(" (%1)").arg(qs(d.detail)));
            QHash<int, QVariant> roles{
                {FoundRole, d.found}, {SortRole, qs(d.dependency.name)}, {Qt::ToolTipRole, where}};
            if (!d.found)
                roles.insert(Qt::ForegroundRole, toneColor(Tone::Bad));
            addNode(opt,
                    {QStringLiteral("%1 (%2)").arg(qs(d.dependency.name),
                                                   qs(to_string(d.dependency.kind))),
                     d.found ? tr("found") : tr("missing"), where},
                    roles);
        }
        if (info->library_report) {
            const auto& r = *info->library_report;
            const auto unresolved = r.unresolved();
            const int lib = addNode(
                kRoot,
                {qs(r.library),
                 !r.readable          ? tr("unreadable")
                 : unresolved.empty() ? tr("all resolved")
                                      : tr("%n unresolved", nullptr, int(unresolved.size())),
                 r.readable ? tr("ELF dependencies (DT_NEEDED), resolved like ld.so")
                            : qs(r.error)},
                {{Qt::ToolTipRole, qs(r.library)}});
            setCellRole(lib, NameColumn, Qt::FontRole, bold);
            if (!r.readable || !unresolved.empty())
                setCellRole(lib, StatusColumn, Qt::ForegroundRole, toneColor(Tone::Bad));
            // Each object's node, so a dependency of a dependency nests under it.
            std::map<std::string, int> nodeOf{{r.library, lib}};
            for (const auto& d : r.dependencies) {
                const auto parentIt = nodeOf.find(d.needed_by);
                const int parent = parentIt != nodeOf.end() ? parentIt->second : lib;
                const QString where = d.found() ? qs(d.path) : qs(d.detail);
                QHash<int, QVariant> roles{
                    {FoundRole, d.found()}, {SortRole, qs(d.soname)}, {Qt::ToolTipRole, where}};
                if (!d.found()) {
                    QFont f;
                    f.setBold(true);
                    roles.insert(Qt::ForegroundRole, toneColor(Tone::Bad));
                    roles.insert(Qt::FontRole, f);
                }
                const int id = addNode(
                    parent,
                    {qs(d.soname), d.found() ? qs(to_string(d.source)) : tr("NOT FOUND"), where},
                    roles);
                if (d.found() && !nodeOf.count(d.path))
                    nodeOf.emplace(d.path, id);
            }
        }
    }
    endBuild();
}

} // namespace switchyard::ui
