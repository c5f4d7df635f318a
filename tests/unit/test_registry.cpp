// The registry as data: every built-in entry is complete on its own (nothing inherited from a neighbour), the
// ladder order and the teaching variants are as documented, the symmetric-C teaching variant shows its
// triangle, and a person's kernel joins and leaves the same registry at run time.
#include <cmath>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "core/engine/cpu_backend.hpp"
#include "core/engine/cpu_gemm.hpp"
#include "core/engine/matrix.hpp"
#include "core/user_kernel/kernel_workshop.hpp"
#include "kernels/engine/registry.hpp"
#include "test_util.hpp"
#include "core/engine/verify.hpp"
#include "core/user_kernel/your_kernel.hpp"

using namespace ts;

TEST(Registry, EveryEntryIsCompleteOnItsOwn) {
  const auto& e = register_kernels();
  std::set<std::string> ids;
  for (const auto& k : e) {
    SCOPED_TRACE(k.info.id);
    EXPECT_TRUE(ids.insert(k.info.id).second) << "duplicate id";
    EXPECT_FALSE(k.info.title.empty());
    EXPECT_GT(k.info.description.size(), 40u);
    EXPECT_EQ(k.info.tiles.size(), k.info.tile_labels.size()) << "one label per tile";
    std::set<std::string> labels(k.info.tile_labels.begin(), k.info.tile_labels.end());
    EXPECT_EQ(labels.size(), k.info.tile_labels.size()) << "labels tell the tiles apart";
    if (!k.info.tiles.empty()) {
      EXPECT_NE(std::find(k.info.tiles.begin(), k.info.tiles.end(), k.info.default_tile), k.info.tiles.end());
      for (size_t i = 0; i < k.info.tiles.size(); ++i)
        EXPECT_NE(k.info.tile_labels[i].find(std::to_string(k.info.tiles[i])), std::string::npos)
            << "the label of tile " << k.info.tiles[i] << " names another size: " << k.info.tile_labels[i];
    } else {
      EXPECT_EQ(k.info.default_tile, 0);
    }
    EXPECT_FALSE(k.info.threads_per_block.empty());
    EXPECT_FALSE(k.info.user);
    EXPECT_EQ(k.info.has_cuda, k.cuda != nullptr);
    // The teaching variants are exactly the three wrong on purpose (a flag inherited by mistake would not
    // be), and only cuBLAS SGEMM is the reference. The title names the kernel; its role is said once, by
    // label().
    const bool teaching =
        k.info.id == "tiled_nosync" || k.info.id == "tiled_floork" || k.info.id == "tiled_mirror";
    EXPECT_EQ(k.info.teaching, teaching) << k.info.id;
    EXPECT_EQ(k.info.is_reference, k.info.id == "cublas") << k.info.id;
    EXPECT_EQ(k.info.title.find("eaching"), std::string::npos) << k.info.title;
    EXPECT_EQ(k.info.title.find("reference"), std::string::npos) << k.info.title;
    EXPECT_EQ(k.info.label().rfind("Teaching, wrong on purpose: ", 0) == 0, teaching);
    EXPECT_EQ(k.info.tf32, k.info.id.find("tf32") != std::string::npos);
  }
  // The ladder, then cuBLAS, then the three teaching variants.
  std::vector<std::string> order;
  for (const auto& k : e) order.push_back(k.info.id);
  EXPECT_EQ(order, (std::vector<std::string>{"naive", "coalesced", "tiled", "blocktile1d", "blocktile2d",
                                             "vectorized", "warptile", "async", "pipelined", "splitk",
                                             "streamk", "wmma_tf32", "mma_tf32", "wgmma_tf32", "cublas",
                                             "cublas_tf32", "tiled_nosync", "tiled_floork", "tiled_mirror"}));
  // Only the reference is the reference; only cuBLAS is untraceable among the CUDA kernels.
  for (const auto& k : e) {
    EXPECT_EQ(k.info.is_reference, k.info.id == "cublas") << k.info.id;
    if (k.cuda) EXPECT_EQ(k.info.traceable, k.info.id.rfind("cublas", 0) != 0) << k.info.id;
  }
}

TEST(Registry, TheSymmetricTeachingVariantGetsTheLowerTriangleWrong) {
  const int64_t n = 70;
  const HostMatrix A = generate_input(InputKind::Symmetric, 3, 0, n, n);
  const HostMatrix B = generate_input(InputKind::Symmetric, 3, 1, n, n);
  std::vector<float> C(size_t(n * n)), R(size_t(n * n));
  cpu_gemm_tiled_mirror(A.data.data(), B.data.data(), C.data(), n, n, n, 16);
  cpu_gemm_reference(A.data.data(), B.data.data(), R.data(), n, n, n);
  const double tol = tolerance_for(n, 1, 1).at(max_abs(R.data(), R.size()));
  int64_t upper_bad = 0, lower_bad = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const bool bad = !(std::fabs(C[size_t(i * n + j)] - R[size_t(i * n + j)]) <= tol);
      (j >= i ? upper_bad : lower_bad) += bad;
    }
  EXPECT_EQ(upper_bad, 0) << "on and above the diagonal it is the tiled kernel";
  EXPECT_GT(lower_bad, n * (n - 1) / 2 * 9 / 10) << "below it, B A instead of A B";
  // The CPU backend reports it as a failure, as the GPU does.
  CpuBackend b(builtin_kernel_infos());
  RunRequest req;
  req.spec.m = req.spec.n = req.spec.k = n;
  req.spec.kernel = "tiled_mirror";
  req.spec.tile = 16;
  req.spec.input = InputKind::Symmetric;
  EXPECT_FALSE(b.run(req, CancelToken()).error.passed);
  // A shape that is not square leaves part of C unwritten (NaN, like the GPU's poisoned C).
  std::vector<float> W(size_t(90 * 40));
  const HostMatrix A2 = generate_input(InputKind::Random, 1, 0, 90, 30);
  const HostMatrix B2 = generate_input(InputKind::Random, 1, 1, 30, 40);
  cpu_gemm_tiled_mirror(A2.data.data(), B2.data.data(), W.data(), 90, 40, 30, 8);
  EXPECT_TRUE(std::isnan(W[size_t(80 * 40 + 5)]));  // row 80 mirrors (5, 80), outside C
  EXPECT_FALSE(std::isnan(W[size_t(5 * 40 + 30)]));
}

TEST(Registry, APersonsKernelJoinsAndLeavesItsBackendsWorkshopAtRunTime) {
  test::TempDir dir;
  const std::string path = dir.file("mine.cu");
  std::ofstream(path)
      << "#define TILE_WIDTH 16\n__global__ void my_matmul(float* C, float* A, float* B, int N) {}\n";
  auto cpu = make_backend(BackendChoice::Cpu, nullptr);
  KernelWorkshop* w = cpu->workshop();
  ASSERT_NE(w, nullptr) << "every backend make_backend gives has a workshop";
  const auto k = w->open(path, {});
  const size_t before = cpu->kernels().size();
  EXPECT_EQ(before, builtin_kernel_infos().size());
  w->publish(k);
  const auto infos = cpu->kernels();
  ASSERT_EQ(infos.size(), before + 1);
  const KernelInfo* info = find_kernel(infos, "yours:my_matmul");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->title, "yours: my_matmul");
  EXPECT_TRUE(info->user);
  EXPECT_TRUE(info->square_only);
  EXPECT_EQ(info->source, path);
  EXPECT_EQ(info->default_tile, 16);
  EXPECT_EQ(info->tiles, (std::vector<int>{8, 16, 32}));
  EXPECT_EQ(info->tile_labels[1], "TILE_WIDTH = 16: block 16 x 16 (256 threads)");
  EXPECT_EQ(info->has_cuda, w->can_build(nullptr));
  // A new version replaces the old one under the same id.
  const auto k2 = w->open(path, {});
  EXPECT_GT(k2->version(), k->version());
  w->publish(k2);
  EXPECT_EQ(cpu->kernels().size(), before + 1);
  EXPECT_EQ(w->find("yours:my_matmul")->version(), k2->version());
  // It is this backend's: another backend (another workshop) does not know it, and the built-in list never
  // changes.
  auto other = make_backend(BackendChoice::Cpu, nullptr);
  const auto other_kernels = other->kernels();
  EXPECT_EQ(find_kernel(other_kernels, "yours:my_matmul"), nullptr);
  EXPECT_EQ(other->workshop()->find("yours:my_matmul"), nullptr);
  EXPECT_EQ(builtin_kernel_infos().size(), before);
  // The CPU backend lists it and says it needs a GPU; square-only kernels refuse other shapes first.
  RunRequest req;
  req.spec.kernel = "yours:my_matmul";
  req.spec.tile = 16;
  req.spec.m = req.spec.n = req.spec.k = 64;
  try {
    cpu->validate(req);
    FAIL() << "a user kernel ran on the CPU backend";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("needs a GPU to run"), std::string::npos) << e.what();
  }
  req.spec.m = 32;
  try {
    cpu->validate(req);
    FAIL();
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("runs on square shapes (M = N = K); M x N x K = 32 x 64 x 64"),
              std::string::npos)
        << e.what();
  }
  w->withdraw("yours:my_matmul");
  EXPECT_EQ(cpu->kernels().size(), before);
  EXPECT_EQ(w->find("yours:my_matmul"), nullptr);
  EXPECT_THROW(cpu->validate(req), ValidationError);
}

// Backend::kernel_list(): the same list as kernels(), shared, and made anew only when the workshop's register
// changes (the window reads it every frame).
TEST(Registry, TheSharedKernelListFollowsTheWorkshopAndIsReusedOtherwise) {
  test::TempDir dir;
  const std::string path = dir.file("mine.cu");
  std::ofstream(path)
      << "#define TILE_WIDTH 16\n__global__ void my_matmul(float* C, float* A, float* B, int N) {}\n";
  auto cpu = make_backend(BackendChoice::Cpu, nullptr);
  KernelWorkshop* w = cpu->workshop();
  ASSERT_NE(w, nullptr);
  const auto first = cpu->kernel_list();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->size(), cpu->kernels().size());
  EXPECT_EQ(cpu->kernel_list(), first) << "no change: the same list, not a copy";
  const uint64_t serial = w->serial();
  w->publish(w->open(path, {}));
  EXPECT_GT(w->serial(), serial);
  const auto after = cpu->kernel_list();
  EXPECT_NE(after, first);
  EXPECT_EQ(after->size(), first->size() + 1);
  EXPECT_NE(find_kernel(*after, "yours:my_matmul"), nullptr);
  EXPECT_EQ(find_kernel(*first, "yours:my_matmul"), nullptr) << "a list read earlier never changes";
  EXPECT_EQ(cpu->kernel_list(), after);
  w->withdraw("yours:my_matmul");
  const auto gone = cpu->kernel_list();
  EXPECT_NE(gone, after);
  EXPECT_EQ(gone->size(), first->size());
  EXPECT_EQ(find_kernel(*gone, "yours:my_matmul"), nullptr);
  w->withdraw("yours:nothing");  // withdrawing what is not there changes nothing
  EXPECT_EQ(cpu->kernel_list(), gone);
}

TEST(Registry, TheCpuBackendsWorkshopSanitizesNothingAndSaysWhy) {
  auto cpu = make_backend(BackendChoice::Cpu, nullptr);
  const KernelWorkshop& w = *cpu->workshop();
  EXPECT_EQ(w.device_arch(), 0);
  std::string why;
  EXPECT_FALSE(w.can_sanitize(&why));
  EXPECT_NE(why.find("needs a GPU"), std::string::npos) << why;
  test::TempDir dir;
  const std::string path = dir.file("mine.cu");
  std::ofstream(path) << "__global__ void k(float* C, const float* A, const float* B, int N) {}\n";
  const auto k = w.open(path, {});
  const auto reports = w.sanitize(*k, ProblemSpec{}, {"memcheck", "racecheck"}, 10);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].tool, "memcheck");
  EXPECT_EQ(reports[1].tool, "racecheck");
  for (const auto& r : reports) {
    EXPECT_FALSE(r.ran);
    EXPECT_EQ(r.problem, why);
  }
}
