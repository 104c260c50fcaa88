// SPDX-License-Identifier: MIT
// The Vulkan loader's driver manifests as diagnosis reads them (nothing loaded): where the
// loader looks (VK_DRIVER_FILES, VK_ICD_FILENAMES, VK_ADD_DRIVER_FILES, the icd.d folders),
// each manifest's library resolved and put through the load simulation (missing, another
// architecture, a missing dependency, a Vulkan version below 1.1), "Vulkan sees only a CPU
// device", and `switchyard-cli doctor` naming a broken manifest with its fix.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "support/childprocess.h"

#include <switchyard/diagnosis/vulkanicd.h>

#include <elf.h>

#include <fstream>
#include <map>

using namespace switchyard;

namespace {

const QString kPlugins = SWITCHYARD_FIXTURE_DIR "/plugins";
const QString kGood = kPlugins + "/good/libswitchyard-fixture-good.so";
const QString kMissingDep = kPlugins + "/missing_dep/libswitchyard-fixture-missing-dep.so";

void write(const QString& path, const std::string& text) {
    std::ofstream(path.toStdString()) << text;
}

std::string manifest(const QString& library, const std::string& api = "1.3.230",
                     const std::string& extra = "") {
    return R"({"file_format_version": "1.0.0", "ICD": {"library_path": ")" + library.toStdString() +
           R"(", "api_version": ")" + api + "\"" + extra + "}}";
}

// The good fixture library with its machine set to aarch64.
QString aarch64Copy(const QString& to) {
    std::ifstream in(kGood.toStdString(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes[18] = char(EM_AARCH64 & 0xff);
    bytes[19] = char(EM_AARCH64 >> 8);
    std::ofstream(to.toStdString(), std::ios::binary).write(bytes.data(), bytes.size());
    return to;
}

std::map<std::string, VulkanIcd> by_file(const std::vector<VulkanIcd>& icds) {
    std::map<std::string, VulkanIcd> out;
    for (const auto& i : icds)
        out[QFileInfo(QString::fromStdString(i.manifest)).fileName().toStdString()] = i;
    return out;
}

} // namespace

class TestVulkanIcd : public QObject {
    Q_OBJECT

private slots:
    void searchFollowsTheLoader() {
        using Env = VulkanIcdSearch::Environment;
        // The standard folders, XDG defaults under HOME.
        auto s = VulkanIcdSearch::from_values(Env{.home = "/home/u"});
        QStringList paths;
        for (const auto& p : s.places)
            paths << QString::fromStdString(p.path);
        QCOMPARE(paths, (QStringList{"/home/u/.config/vulkan/icd.d", "/etc/xdg/vulkan/icd.d",
                                     "/etc/vulkan/icd.d", "/home/u/.local/share/vulkan/icd.d",
                                     "/usr/local/share/vulkan/icd.d", "/usr/share/vulkan/icd.d"}));
        QVERIFY(!s.replaced);
        // VK_ADD_DRIVER_FILES first, then the standard folders.
        s = VulkanIcdSearch::from_values(
            Env{.add_driver_files = "/a.json:/b", .xdg_data_dirs = "/opt/share"});
        QCOMPARE(s.places.front().path, std::string("/a.json"));
        QCOMPARE(s.places.front().origin, std::string("VK_ADD_DRIVER_FILES"));
        QCOMPARE(s.places[1].path, std::string("/b"));
        QCOMPARE(s.places.back().path, std::string("/opt/share/vulkan/icd.d"));
        // VK_DRIVER_FILES replaces everything, and wins over VK_ICD_FILENAMES.
        s = VulkanIcdSearch::from_values(Env{
            .driver_files = "/x.json", .icd_filenames = "/y.json", .add_driver_files = "/a.json"});
        QVERIFY(s.replaced);
        QCOMPARE(int(s.places.size()), 1);
        QCOMPARE(s.places[0].origin, std::string("VK_DRIVER_FILES"));
        QCOMPARE(s.describe(), std::string("VK_DRIVER_FILES=/x.json"));
        s = VulkanIcdSearch::from_values(Env{.icd_filenames = "/y.json"});
        QCOMPARE(s.places[0].origin, std::string("VK_ICD_FILENAMES"));
    }

    void manifestsAreDiagnosed() {
        if (!QFile::exists(kGood) || !QFile::exists(kMissingDep))
            QSKIP("the fixture plugins are not built");
        QTemporaryDir dir;
        const auto at = [&](const char* name) { return dir.filePath(name); };
        write(at("lvp_icd.x86_64.json"), manifest(kGood));
        write(at("missing.json"), manifest("/nonexistent/libvulkan_missing.so"));
        write(at("bare.json"), manifest("libvulkan_no_such_driver.so.1"));
        QDir(dir.path()).mkdir("lib");
        QFile::copy(kGood, at("lib/libvulkan_rel.so"));
        write(at("relative.json"), manifest("./lib/libvulkan_rel.so"));
        write(at("aarch64.json"), manifest(aarch64Copy(at("libvulkan_arm.so"))));
        write(at("arch32.json"), manifest(kGood, "1.3.230", R"(, "library_arch": "32")"));
        write(at("dep.json"), manifest(kMissingDep));
        write(at("old.json"), manifest(kGood, "1.0.61"));
        write(at("garbage.json"), "{ not json");
        write(at("noicd.json"), R"({"file_format_version": "1.0.0"})");
        write(at("not-a-manifest.txt"), manifest("/nonexistent"));

        const auto icds = find_vulkan_icds(
            VulkanIcdSearch::from_values({.driver_files = dir.path().toStdString()}));
        const auto m = by_file(icds);
        QCOMPARE(int(icds.size()), 10); // the .json files, by name
        QVERIFY(std::is_sorted(icds.begin(), icds.end(), [](const auto& a, const auto& b) {
            return a.manifest < b.manifest;
        }));
        const auto state = [&](const char* f) { return m.at(f).state; };
        QCOMPARE(state("lvp_icd.x86_64.json"), VulkanIcdState::Ok);
        QVERIFY(m.at("lvp_icd.x86_64.json").cpu_driver);
        QCOMPARE(m.at("lvp_icd.x86_64.json").api_version, std::string("1.3.230"));
        QCOMPARE(m.at("lvp_icd.x86_64.json").origin, std::string("VK_DRIVER_FILES"));
        QCOMPARE(state("relative.json"), VulkanIcdState::Ok); // beside the manifest
        QCOMPARE(QString::fromStdString(m.at("relative.json").resolved.path),
                 QFileInfo(at("lib/libvulkan_rel.so")).absoluteFilePath());
        QVERIFY(!m.at("relative.json").cpu_driver);
        QCOMPARE(state("missing.json"), VulkanIcdState::LibraryMissing);
        QVERIFY2(
            m.at("missing.json").problem.find("/nonexistent/libvulkan_missing.so is not found") !=
                std::string::npos,
            m.at("missing.json").problem.c_str());
        QCOMPARE(state("bare.json"), VulkanIcdState::LibraryMissing);
        QCOMPARE(state("aarch64.json"), VulkanIcdState::WrongArchitecture);
        QCOMPARE(state("arch32.json"), VulkanIcdState::WrongArchitecture);
        QCOMPARE(state("dep.json"), VulkanIcdState::DependencyMissing);
        QVERIFY2(m.at("dep.json").problem.find("libswitchyard-nonexistent-dep.so.1") !=
                     std::string::npos,
                 m.at("dep.json").problem.c_str());
        QCOMPARE(state("old.json"), VulkanIcdState::ApiTooOld);
        QCOMPARE(state("garbage.json"), VulkanIcdState::ManifestInvalid);
        QCOMPARE(state("noicd.json"), VulkanIcdState::ManifestInvalid);
        for (const auto& i : icds)
            QCOMPARE(i.ok(), i.problem.empty());
        // A manifest a variable names is tried even where it does not exist.
        const auto absent = find_vulkan_icds(
            VulkanIcdSearch::from_values({.driver_files = at("absent.json").toStdString()}));
        QCOMPARE(int(absent.size()), 1);
        QCOMPARE(absent[0].state, VulkanIcdState::ManifestInvalid);
    }

    void onlyCpuIsSaid() {
        VulkanIcd lvp{.manifest = "/d/lvp_icd.x86_64.json", .cpu_driver = true};
        VulkanIcd nvidia{.manifest = "/d/nvidia_icd.json"};
        QCOMPARE(vulkan_only_cpu({lvp, nvidia}), std::string()); // both load
        nvidia.state = VulkanIcdState::LibraryMissing;
        nvidia.problem = "libGLX_nvidia.so.0 is not found";
        QCOMPARE(vulkan_only_cpu({lvp, nvidia}),
                 std::string("Vulkan sees only a CPU device (lvp_icd.x86_64.json): the GPU "
                             "driver nvidia_icd.json cannot load"));
        VulkanIcd radeon{.manifest = "/d/radeon_icd.x86_64.json"};
        QCOMPARE(vulkan_only_cpu({lvp, nvidia, radeon}), std::string()); // a GPU driver loads
        QCOMPARE(vulkan_only_cpu({lvp}), std::string()); // no GPU driver at all: nothing broken
    }

    // The issue's fixture: a manifest pointing to a missing library, named by doctor with
    // its fix, beside a CPU driver that loads.
    void doctorNamesABrokenManifest() {
        if (!QFile::exists(kGood))
            QSKIP("the fixture plugins are not built");
        QTemporaryDir dir;
        write(dir.filePath("lvp_icd.x86_64.json"), manifest(kGood));
        write(dir.filePath("nvidia_icd.json"), manifest("/nonexistent/libGLX_nvidia.so.0"));
        const auto r =
            test::run_cli({"doctor", "--json"}, "", {.env = {{"VK_DRIVER_FILES", dir.path()}}});
        QVERIFY2(r.code == 0 || r.code == 1, r.err.constData());
        const auto doc = QJsonDocument::fromJson(r.out).object();
        bool named = false, onlyCpu = false;
        for (const auto& v : doc.value("problems").toArray()) {
            const auto p = v.toObject();
            if (p.value("cause").toString() != "vulkan_icd_broken")
                continue;
            QCOMPARE(p.value("severity").toString(), QString("warning"));
            QVERIFY(p.value("fix").toString().contains("Vulkan driver"));
            if (p.value("subject").toString() == dir.filePath("nvidia_icd.json")) {
                named = true;
                QVERIFY2(p.value("problem").toString().contains(
                             "/nonexistent/libGLX_nvidia.so.0 is not found"),
                         qPrintable(p.value("problem").toString()));
            }
            onlyCpu |= p.value("problem").toString().startsWith(
                "Vulkan sees only a CPU device (lvp_icd.x86_64.json)");
        }
        QVERIFY2(named, r.out.constData());
        QVERIFY(onlyCpu);
        // Every manifest in the JSON and among the runtimes.
        QCOMPARE(doc.value("vulkan_icds").toArray().size(), 2);
        int runtimes = 0;
        for (const auto& v : doc.value("runtimes").toArray())
            runtimes += v.toObject().value("kind").toString() == "vulkan-icd";
        QCOMPARE(runtimes, 2);
        // The text report says it too.
        const auto text = test::run_cli({"doctor"}, "", {.env = {{"VK_DRIVER_FILES", dir.path()}}});
        QVERIFY2(text.out.contains("Vulkan sees only a CPU device"), text.out.constData());
        QVERIFY(text.out.contains("nvidia_icd.json"));
    }
};

QTEST_GUILESS_MAIN(TestVulkanIcd)
#include "tst_vulkanicd.moc"
