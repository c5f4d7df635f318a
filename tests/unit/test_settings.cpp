#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/io/settings.hpp"
#include "test_util.hpp"

using namespace ts;

TEST(Settings, RoundTripThroughTheConfigFile) {
  test::TempDir dir;
  Settings s;
  s.spec.m = 33;
  s.spec.n = 65;
  s.spec.k = 17;
  s.spec.kernel = "naive";
  s.spec.tile = 8;
  s.spec.input = InputKind::Identity;
  s.spec.seed = 42;
  s.square = false;
  s.auto_run = false;
  s.changing_inputs = true;
  s.export_dir = "/tmp/x";
  save_settings(dir.path() / "sub" / "settings.json", s);
  std::string warnings;
  Settings r = load_settings(dir.path() / "sub" / "settings.json", &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings;
  EXPECT_EQ(r.spec, s.spec);
  EXPECT_EQ(r.square, false);
  EXPECT_EQ(r.auto_run, false);
  EXPECT_TRUE(r.changing_inputs);
  EXPECT_EQ(r.export_dir, "/tmp/x");
}

TEST(Settings, InvalidEntriesFallBackToDefaultsWithAWarning) {
  test::TempDir dir;
  { std::ofstream(dir.file("s.json")) << R"({"m": -4, "n": "big", "k": 64, "input": "gauss", "tile": "x"})"; }
  std::string warnings;
  Settings r = load_settings(dir.file("s.json"), &warnings);
  EXPECT_EQ(r.spec.m, ProblemSpec{}.m);
  EXPECT_EQ(r.spec.n, ProblemSpec{}.n);
  EXPECT_EQ(r.spec.k, 64);
  EXPECT_NE(warnings.find("m = -4"), std::string::npos);
  EXPECT_NE(warnings.find("input"), std::string::npos);
  { std::ofstream(dir.file("broken.json")) << "{not json"; }
  warnings.clear();
  Settings b = load_settings(dir.file("broken.json"), &warnings);
  EXPECT_EQ(b.spec, ProblemSpec{});
  EXPECT_NE(warnings.find("using defaults"), std::string::npos);
}

TEST(Settings, ConfigDirFollowsXdgAndNeverTheWorkingDirectory) {
  setenv("XDG_CONFIG_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(config_dir(), std::filesystem::path("/tmp/xdg-test/tilescope"));
  unsetenv("XDG_CONFIG_HOME");
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(config_dir(), std::filesystem::path("/home/someone/.config/tilescope"));
}

TEST(Settings, HeatmapDisplayRoundTripsAndBadValuesWarn) {
  test::TempDir dir;
  Settings s;
  s.matrices = {"magma", Reduce::Max, RangeMode::Manual, -2.5f, 7.0f};
  s.error = {"RdBu_r", Reduce::AbsMax, RangeMode::Symmetric, -1, 1};
  save_settings(dir.file("s.json"), s);
  std::string warnings;
  Settings r = load_settings(dir.file("s.json"), &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings;
  EXPECT_EQ(r.matrices.colormap, "magma");
  EXPECT_EQ(r.matrices.reduce, Reduce::Max);
  EXPECT_EQ(r.matrices.range, RangeMode::Manual);
  EXPECT_EQ(r.matrices.lo, -2.5f);
  EXPECT_EQ(r.matrices.hi, 7.0f);
  EXPECT_EQ(r.error.colormap, "RdBu_r");
  EXPECT_EQ(r.error.range, RangeMode::Symmetric);
  {
    std::ofstream(dir.file("bad.json"))
        << R"({"heatmaps": {"reduce": "median", "range": "log", "lo": "x"}, "error_map": 3})";
  }
  warnings.clear();
  Settings b = load_settings(dir.file("bad.json"), &warnings);
  EXPECT_EQ(b.matrices.reduce, Reduce::Mean);
  EXPECT_EQ(b.matrices.range, RangeMode::Auto);
  EXPECT_EQ(b.error.reduce, Reduce::AbsMax);  // the error map's own defaults
  EXPECT_NE(warnings.find("heatmaps.reduce"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("heatmaps.range"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("heatmaps.lo"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("error_map"), std::string::npos) << warnings;
}

namespace {
std::string file_content(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
}  // namespace

TEST(Settings, ValuesAreCheckedNotTruncatedAndWrongTypesAreNamed) {
  test::TempDir dir;
  {
    std::ofstream(dir.file("s.json"))
        << R"({"tile": 4294967312, "m": 9223372036854775808, "seed": -1, "square": "yes", "auto_run": 1,)"
        << R"( "kernel": 5, "export_dir": [], "input": 3, "heatmaps": {"colormap": 7, "lo": 1e300}})";
  }
  std::string w;
  bool keep = false;
  const Settings s = load_settings(dir.file("s.json"), &w, &keep);
  EXPECT_EQ(s.spec.tile, ProblemSpec{}.tile) << "4294967312 must not become 16";
  EXPECT_EQ(s.spec.m, ProblemSpec{}.m);
  EXPECT_EQ(s.spec.seed, ProblemSpec{}.seed);
  EXPECT_EQ(s.square, true);
  EXPECT_EQ(s.auto_run, true);
  EXPECT_EQ(s.spec.kernel, "tiled");
  EXPECT_EQ(s.matrices.lo, 0.0f);
  for (const char* named : {"tile = 4294967312", "m = 9223372036854775808", "seed = -1", "square = \"yes\"",
                            "auto_run = 1", "kernel = 5", "export_dir = an array of 0 values", "input = 3",
                            "heatmaps.colormap = 7", "heatmaps.lo = 1e+300"})
    EXPECT_NE(w.find(named), std::string::npos) << named << " missing from: " << w;
  EXPECT_TRUE(keep) << "a file with invalid entries must be kept as it is";
}

TEST(Settings, MissingSizesTakeTheDefaultsGivenNotTheGpuOnes) {
  test::TempDir dir;
  { std::ofstream(dir.file("s.json")) << R"({"kernel": "naive", "m": 40})"; }
  Settings cpu_defaults;
  cpu_defaults.spec.m = cpu_defaults.spec.n = cpu_defaults.spec.k = 256;
  std::string w;
  bool keep = true;
  const Settings s = load_settings(dir.file("s.json"), &w, &keep, cpu_defaults);
  EXPECT_EQ(s.spec.m, 40);
  EXPECT_EQ(s.spec.n, 256);
  EXPECT_EQ(s.spec.k, 256);
  EXPECT_EQ(s.spec.kernel, "naive");
  EXPECT_TRUE(w.empty()) << w;
  EXPECT_FALSE(keep);
  // Absent: the defaults, no warning, and the file may be written.
  const Settings absent = load_settings(dir.file("none.json"), &w, &keep, cpu_defaults);
  EXPECT_EQ(absent.spec.m, 256);
  EXPECT_TRUE(w.empty());
  EXPECT_FALSE(keep);
}

TEST(Settings, BrokenFilesGiveDefaultsAWarningAndAreKept) {
  test::TempDir dir;
  const std::string deep =
      "{\"m\": 64, \"heatmaps\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  { std::ofstream(dir.file("deep.json")) << deep; }
  ASSERT_EQ(mkfifo(dir.file("fifo.json").c_str(), 0600), 0);
  std::filesystem::create_symlink("loop.json", dir.file("loop.json"));
  std::filesystem::create_directories(dir.file("folder.json"));
  { std::ofstream(dir.file("array.json")) << "[1, 2, 3]"; }
  { std::ofstream(dir.file("big.json")) << std::string(2 << 20, ' ') << "{}"; }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"deep.json", "nested more than 64 levels deep"},
      {"fifo.json", "is a FIFO"},
      {"loop.json", "Too many levels of symbolic links"},
      {"folder.json", "is a folder"},
      {"array.json", "holds an array of 3 values, not a JSON object"},
      {"big.json", "more than settings ever need"},
  };
  for (const auto& [name, why] : cases) {
    SCOPED_TRACE(name);
    std::string w;
    bool keep = false;
    const Settings s = load_settings(dir.file(name), &w, &keep);
    EXPECT_EQ(s.spec, ProblemSpec{});
    EXPECT_NE(w.find(why), std::string::npos) << w;
    EXPECT_NE(w.find("kept as it is"), std::string::npos) << w;
    EXPECT_TRUE(keep);
    EXPECT_LT(w.size(), 600u) << "a warning that long prints the value: " << w.substr(0, 600);
  }
  EXPECT_EQ(file_content(dir.file("deep.json")), deep);
}

TEST(Settings, SavingReplacesARegularFileOnlyAndAFailedSaveKeepsTheOldOne) {
  test::TempDir dir;
  ASSERT_EQ(mkfifo(dir.file("fifo.json").c_str(), 0600), 0);
  EXPECT_THROW(save_settings(dir.file("fifo.json"), Settings{}), ValidationError);
  EXPECT_TRUE(std::filesystem::is_fifo(dir.file("fifo.json")));
  { std::ofstream(dir.file("s.json")) << "{\"m\": 5}"; }
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto* handler = signal(SIGXFSZ, SIG_IGN);
  rlimit tiny = old;
  tiny.rlim_cur = 16;  // the settings JSON is longer: the write fails as on a full disk
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &tiny), 0);
  bool failed = false;
  try {
    save_settings(dir.file("s.json"), Settings{});
  } catch (const std::runtime_error&) {
    failed = true;
  }
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, handler);
  EXPECT_TRUE(failed) << "a truncated settings file was renamed into place";
  EXPECT_EQ(file_content(dir.file("s.json")), "{\"m\": 5}");
  size_t files = 0;
  for (auto it = std::filesystem::directory_iterator(dir.path()); it != std::filesystem::directory_iterator();
       ++it)
    ++files;
  EXPECT_EQ(files, 2u) << "a temporary file was left behind";
}

// [SECTION] Issue 25: the file dialog's kind, the kernel file that was open and the Sweep panel's fields.
TEST(Settings, TheFileDialogTheKernelFileAndTheSweepReadBackAsSaved) {
  test::TempDir dir;
  Settings s;
  s.file_dialog = FileDialogChoice::Window;
  s.kernel_file = "/home/someone/kernels/mine.cu";
  SweepSettings w;
  w.from = 64;
  w.to = 2048;
  w.step = 64;
  w.powers_of_two = true;
  w.offset_on = true;
  w.offset = 3;
  w.shape = SweepShape::FixedK;
  w.fixed = 512;
  w.configs = {{"tiled", 32}, {"cublas", 0}, {"yours:my_mm", 16}};
  w.quick = true;
  w.min_s = 0.25;
  w.max_s = 4;
  s.sweep = w;
  save_settings(dir.file("s.json"), s);
  std::string warnings;
  bool keep = true;
  const Settings r = load_settings(dir.file("s.json"), &warnings, &keep);
  EXPECT_TRUE(warnings.empty()) << warnings;
  EXPECT_FALSE(keep);
  EXPECT_EQ(r.file_dialog, FileDialogChoice::Window);
  EXPECT_EQ(r.kernel_file, "/home/someone/kernels/mine.cu");
  ASSERT_TRUE(r.sweep.has_value());
  EXPECT_TRUE(*r.sweep == w);
  EXPECT_EQ(r.sweep->configs.size(), 3u);
  EXPECT_EQ(r.sweep->configs[2].kernel, "yours:my_mm");
  EXPECT_EQ(r.sweep->shape, SweepShape::FixedK);
  // Never set: no sweep settings (the panel takes the backend's defaults), the desktop's dialog, no file.
  save_settings(dir.file("d.json"), Settings{});
  const Settings d = load_settings(dir.file("d.json"), &warnings, &keep);
  EXPECT_FALSE(d.sweep.has_value());
  EXPECT_EQ(d.file_dialog, FileDialogChoice::Desktop);
  EXPECT_TRUE(d.kernel_file.empty());
}

TEST(Settings, BadSweepAndDialogValuesAreNamedKeepTheirDefaultsAndTheFileIsKept) {
  test::TempDir dir;
  {
    std::ofstream(dir.file("s.json"))
        << R"({"file_dialog": "gtk", "kernel_file": 7, "sweep": {"from": 0, "to": 2147483648, "step": "32",)"
        << R"( "spacing": "x3", "offset_on": "yes", "offset": 1025, "shape": "cube", "fixed": -1,)"
        << R"( "configs": [{"kernel": "tiled", "tile": 2000}], "policy": "slow", "min_s": 0, "max_s": 3601}})";
  }
  std::string w;
  bool keep = false;
  const Settings s = load_settings(dir.file("s.json"), &w, &keep);
  EXPECT_TRUE(keep) << "a file with invalid entries must be kept as it is";
  EXPECT_EQ(s.file_dialog, FileDialogChoice::Desktop);
  EXPECT_TRUE(s.kernel_file.empty());
  ASSERT_TRUE(s.sweep.has_value());  // an object: its valid fields (none here) over the defaults
  EXPECT_TRUE(*s.sweep == SweepSettings{});
  for (const char* named :
       {"file_dialog = \"gtk\"", "kernel_file = 7", "sweep.from = 0", "sweep.to = 2147483648",
        "sweep.step = \"32\"", "sweep.spacing = \"x3\"", "sweep.offset_on = \"yes\"", "sweep.offset = 1025",
        "sweep.shape = \"cube\"", "sweep.fixed = -1", "sweep.configs = an array of 1 values",
        "sweep.policy = \"slow\"", "sweep.min_s = 0", "sweep.max_s = 3601"})
    EXPECT_NE(w.find(named), std::string::npos) << named << " missing from: " << w;
  // Too many configurations, or one that is not {kernel, tile}: the list is refused whole.
  nlohmann::json many = nlohmann::json::array();
  for (int i = 0; i < 257; ++i) many.push_back({{"kernel", "tiled"}, {"tile", 16}});
  for (const nlohmann::json& configs :
       {many, nlohmann::json::array({{{"kernel", ""}, {"tile", 0}}}), nlohmann::json::array({"tiled"}),
        nlohmann::json::array({{{"kernel", "tiled"}, {"tile", 16}, {"extra", 1}}})}) {
    w.clear();
    const Settings t = settings_from_json({{"sweep", {{"configs", configs}, {"from", 128}}}}, &w);
    EXPECT_NE(w.find("sweep.configs"), std::string::npos) << configs.dump().substr(0, 80);
    ASSERT_TRUE(t.sweep.has_value());
    EXPECT_TRUE(t.sweep->configs.empty());
    EXPECT_EQ(t.sweep->from, 128);  // the valid fields beside it are kept
  }
  // "sweep" of the wrong type: named, no sweep settings.
  w.clear();
  EXPECT_FALSE(settings_from_json({{"sweep", 5}}, &w).sweep.has_value());
  EXPECT_NE(w.find("sweep = 5"), std::string::npos) << w;
}

TEST(Settings, MissingSweepFieldsTakeTheirDefaultsQuietly) {
  std::string w;
  const Settings s =
      settings_from_json({{"sweep", {{"from", 32}, {"configs", {{{"kernel", "naive"}, {"tile", 0}}}}}}}, &w);
  EXPECT_TRUE(w.empty()) << w;
  ASSERT_TRUE(s.sweep.has_value());
  EXPECT_EQ(s.sweep->from, 32);
  EXPECT_EQ(s.sweep->to, SweepSettings{}.to);
  EXPECT_EQ(s.sweep->step, SweepSettings{}.step);
  EXPECT_EQ(s.sweep->max_s, SweepSettings{}.max_s);
  ASSERT_EQ(s.sweep->configs.size(), 1u);
  EXPECT_EQ(s.sweep->configs[0].kernel, "naive");
  // A file from before these settings existed: none of them, no warning.
  const Settings old = settings_from_json({{"m", 64}}, &w);
  EXPECT_TRUE(w.empty()) << w;
  EXPECT_FALSE(old.sweep.has_value());
  EXPECT_EQ(old.file_dialog, FileDialogChoice::Desktop);
  EXPECT_TRUE(old.kernel_file.empty());
}

// File > Connect to engine's remembered list: the most recent first, one entry per command, at most
// kMaxRememberedEngines; read back as saved; a bad entry is left out and named, the rest kept.
TEST(Settings, RememberedEnginesRoundTripMostRecentFirstAndBadEntriesAreNamed) {
  std::vector<RememberedEngine> list;
  remember_engine(list, {"box", "ssh box tilescope serve"});
  remember_engine(list, {"gpu1", "tilescope serve --device 1"});
  remember_engine(list, {"box again", "ssh box tilescope serve"});  // the same command: moved to the front
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].name, "box again");
  EXPECT_EQ(list[1].command, "tilescope serve --device 1");
  EXPECT_THROW(remember_engine(list, {"x", "   "}), ValidationError);
  EXPECT_THROW(remember_engine(list, {"x", "ssh a\nb"}), ValidationError);
  EXPECT_THROW(remember_engine(list, {std::string(kMaxEngineNameChars + 1, 'n'), "ssh a"}), ValidationError);
  EXPECT_THROW(remember_engine(list, {"x", std::string(kMaxEngineCommandChars + 1, 'c')}), ValidationError);
  EXPECT_EQ(list.size(), 2u);
  for (size_t i = 0; i < kMaxRememberedEngines + 3; ++i)
    remember_engine(list, {"", "ssh host" + std::to_string(i) + " tilescope serve"});
  EXPECT_EQ(list.size(), kMaxRememberedEngines);
  EXPECT_EQ(list.front().command,
            "ssh host" + std::to_string(kMaxRememberedEngines + 2) + " tilescope serve");

  Settings s;
  s.engines = {{"box", "ssh box tilescope serve"}, {"", "srun --gres=gpu:1 tilescope serve"}};
  std::string w;
  const Settings back = settings_from_json(to_json(s), &w);
  EXPECT_EQ(w, "");
  EXPECT_EQ(back.engines, s.engines);

  nlohmann::json j = to_json(s);
  j["engines"] = nlohmann::json::array({nlohmann::json{{"name", "a"}, {"command", "ssh a tilescope serve"}},
                                        nlohmann::json{{"name", 3}},
                                        nlohmann::json{{"name", "b"}, {"command", "ssh b tilescope serve"}}});
  const Settings bad = settings_from_json(j, &w);
  ASSERT_EQ(bad.engines.size(), 2u);
  EXPECT_EQ(bad.engines[0].name, "a");
  EXPECT_EQ(bad.engines[1].name, "b");
  EXPECT_NE(w.find("engines[1] left out"), std::string::npos) << w;
  j["engines"] = "ssh a";
  w.clear();
  EXPECT_TRUE(settings_from_json(j, &w).engines.empty());
  EXPECT_NE(w.find("engines"), std::string::npos) << w;
}
