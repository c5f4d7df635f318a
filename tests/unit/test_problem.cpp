#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core/engine/backend.hpp"
#include "core/engine/problem.hpp"
#include "kernels/engine/registry.hpp"

using namespace ts;

TEST(ParseDim, AcceptsPositiveWholeNumbers) {
  EXPECT_EQ(parse_dim("1", "N"), 1);
  EXPECT_EQ(parse_dim("4096", "N"), 4096);
  EXPECT_EQ(parse_dim(" 17 ", "N"), 17);
  // The .npy reader's 131072 is not a limit of the problem: K = 1000003 at M = N = 1 needs 4 MB.
  EXPECT_EQ(parse_dim("1000003", "--k"), 1000003);
  EXPECT_EQ(parse_dim("2147483647", "N"), kMaxDim);
}

TEST(ParseDim, RefusesZeroNegativeTextAndTooLargeWithTheValueInTheMessage) {
  auto msg = [](const std::string& s) {
    try {
      parse_dim(s, "--size");
    } catch (const ValidationError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(msg("0").find("--size = 0 must be at least 1"), std::string::npos);
  EXPECT_NE(msg("-3").find("negative"), std::string::npos);
  EXPECT_NE(msg("abc").find("'abc' is not a whole number"), std::string::npos);
  EXPECT_NE(msg("1e3").find("not a whole number"), std::string::npos);
  EXPECT_NE(msg("4.5").find("not a whole number"), std::string::npos);
  EXPECT_NE(msg("").find("empty"), std::string::npos);
  EXPECT_NE(msg("2147483648").find("above the limit of 2147483647"), std::string::npos);
  EXPECT_NE(msg("99999999999999999999").find("above the limit"), std::string::npos);
}

TEST(ParsePositive, AcceptsPositiveFiniteNumbersAndRefusesTheRestNamingTheOption) {
  EXPECT_EQ(parse_positive("0.5", "--every"), 0.5);
  EXPECT_EQ(parse_positive("10", "--every"), 10.0);
  EXPECT_EQ(parse_positive("1e2", "--every"), 100.0);
  for (const char* bad : {"", "0", "-1", "abc", "1x", "inf", "nan", "1e400"}) {
    try {
      parse_positive(bad, "--every");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ValidationError& e) {
      EXPECT_NE(std::string(e.what()).find("--every"), std::string::npos) << e.what();
    }
  }
  try {
    parse_positive("90000", "--watch", 86400);
    ADD_FAILURE() << "accepted a value above the limit";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("above the limit of 86400"), std::string::npos) << e.what();
  }
}

TEST(ParseSeconds, TakesARangeAndSaysItInTheMessage) {
  EXPECT_EQ(parse_seconds("0.5", "--hang-limit", 0.5, 600), 0.5);
  EXPECT_EQ(parse_seconds("600", "--hang-limit", 0.5, 600), 600.0);
  EXPECT_EQ(parse_seconds("0.001", "sweep 'at most'", 0, 3600), 0.001);
  const std::pair<const char*, const char*> bad[] = {
      {"0.4", "--hang-limit = '0.4' is not a number of seconds from 0.5 to 600"},
      {"601", "--hang-limit = '601' is not a number of seconds from 0.5 to 600"},
      {"abc", "--hang-limit = 'abc' is not a number of seconds from 0.5 to 600"},
      {"nan", "--hang-limit = 'nan' is not a number of seconds from 0.5 to 600"}};
  for (const auto& [text, said] : bad) {
    try {
      parse_seconds(text, "--hang-limit", 0.5, 600);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const ValidationError& e) {
      EXPECT_EQ(std::string(e.what()), said);
    }
  }
  try {
    parse_seconds("0", "sweep 'at least'", 0, 3600);
    ADD_FAILURE() << "accepted 0 seconds";
  } catch (const ValidationError& e) {
    EXPECT_EQ(std::string(e.what()), "sweep 'at least' = '0' is not a number of seconds in (0, 3600]");
  }
}

TEST(ParseSeed, TakesEveryWholeNumberOfNineteenDigitsAndNothingElse) {
  EXPECT_EQ(parse_seed("0", "--seed"), 0u);
  EXPECT_EQ(parse_seed("9999999999999999999", "--seed"), 9999999999999999999ull);
  for (const char* bad : {"", "-1", "1.5", " 1", "12345678901234567890", "0x10"}) {
    try {
      parse_seed(bad, "--seed");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ValidationError& e) {
      EXPECT_EQ(std::string(e.what()),
                "--seed = '" + std::string(bad) + "' is not a whole number from 0 to 9999999999999999999");
    }
  }
}

// The memcheck guard's shape: small, and with the same partial tile as the real one for every power-of-two
// tile up to 256.
TEST(SmallDimLike, KeepsSmallSidesAndTheRemainderModulo256OfLargeOnes) {
  for (int64_t d : {1, 17, 256, 300, 511}) EXPECT_EQ(small_dim_like(d), d);
  EXPECT_EQ(small_dim_like(512), 256);
  EXPECT_EQ(small_dim_like(1000), 488);
  EXPECT_EQ(small_dim_like(4096), 256);
  EXPECT_EQ(small_dim_like(4099), 259);
  EXPECT_EQ(small_dim_like(46341), 256 + 46341 % 256);
  for (int64_t d = 512; d < 20000; d += 37) {
    const int64_t s = small_dim_like(d);
    EXPECT_GE(s, 256);
    EXPECT_LE(s, 511);
    for (int64_t tile : {8, 16, 32, 64, 128, 256}) EXPECT_EQ(s % tile, d % tile) << d << " tile " << tile;
  }
}

TEST(ValidateShape, SymmetricInputsNeedSquareMatrices) {
  ProblemSpec s;
  s.input = InputKind::Symmetric;
  s.m = s.n = s.k = 64;
  EXPECT_NO_THROW(validate_shape(s));
  s.n = 65;
  EXPECT_THROW(validate_shape(s), ValidationError);
  s.input = InputKind::Random;
  EXPECT_NO_THROW(validate_shape(s));
  s.m = 0;
  EXPECT_THROW(validate_shape(s), ValidationError);
}

TEST(InputKind, ParsesEveryNameAndRefusesOthers) {
  for (InputKind k : generated_input_kinds()) EXPECT_EQ(parse_input_kind(to_string(k)), k);
  EXPECT_THROW(parse_input_kind("gaussian"), ValidationError);
  EXPECT_THROW(parse_backend_choice("opencl"), ValidationError);
  EXPECT_EQ(parse_backend_choice("cpu"), BackendChoice::Cpu);
}

TEST(Registry, HasNaiveTiledAndCublasWithTheirTiles) {
  const auto infos = builtin_kernel_infos();
  const KernelInfo* tiled = find_kernel(infos, "tiled");
  ASSERT_NE(tiled, nullptr);
  EXPECT_EQ(tiled->tiles, (std::vector<int>{8, 16, 32}));
  EXPECT_NE(tiled->cpu, nullptr);
  const KernelInfo* cublas = find_kernel(infos, "cublas");
  ASSERT_NE(cublas, nullptr);
  EXPECT_TRUE(cublas->is_reference);
  EXPECT_TRUE(cublas->tiles.empty());
  EXPECT_EQ(cublas->cpu, nullptr);
  ASSERT_NE(find_kernel(infos, "naive"), nullptr);
  for (const auto& k : infos) EXPECT_FALSE(k.description.empty()) << k.id;
}

TEST(ValidateKernel, ChecksNameAndTile) {
  const auto infos = builtin_kernel_infos();
  ProblemSpec s;
  s.kernel = "tiled";
  s.tile = 12;
  try {
    validate_kernel(s, infos, true);
    FAIL() << "tile 12 accepted";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("tile 12 is not allowed"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("8, 16, 32"), std::string::npos);
  }
  s.kernel = "nope";
  EXPECT_THROW(validate_kernel(s, infos, false), ValidationError);
  s.kernel = "cublas";
  s.tile = 16;
  EXPECT_THROW(validate_kernel(s, infos, true), ValidationError);  // explicit tile for a tile-less kernel
  EXPECT_NO_THROW(validate_kernel(s, infos, false));
  EXPECT_EQ(s.tile, 0);
}

TEST(Tolerance, ScalesLinearlyWithKAndTheInputMagnitudes) {
  const double u = std::ldexp(1.0, -24), t = std::ldexp(1.0, -10);
  EXPECT_DOUBLE_EQ(tolerance_for(2048, 1, 1).at(0), 2 * tolerance_for(1024, 1, 1).at(0));
  EXPECT_DOUBLE_EQ(tolerance_for(1024, 2, 3).at(0), 6 * tolerance_for(1024, 1, 1).at(0));
  EXPECT_DOUBLE_EQ(tolerance_for(4096, 1, 1).fixed, 8 * 4096 * u);  // signs that mix: errors cancel
  // One sign: errors add up to the worst-case bound of two K-term sums, 2 K u |C|.
  EXPECT_DOUBLE_EQ(tolerance_for(4096, 0, 0).at(1e6), 2 * 4096 * u * 1e6);
  EXPECT_DOUBLE_EQ(tolerance_for(4096, 1, 1).at(1e6), 8 * 4096 * u + 2 * 4096 * u * 1e6);
  // TF32: sqrt(K) growth of random-signed input roundings, and 3 * 2^-10 |C| when they all point one way.
  EXPECT_DOUBLE_EQ(tolerance_for(4096, 1, 1, true).at(0), 8 * 4096 * u + 4 * 64 * t);
  EXPECT_DOUBLE_EQ(tolerance_for(4096, 0, 0, true).at(100), 2 * 4096 * u * 100 + 3 * t * 100);
  // An infinite reference (overflow) makes it infinite, which compare() never passes.
  EXPECT_TRUE(std::isinf(tolerance_for(16, 1, 1).at(std::numeric_limits<double>::infinity())));
}

TEST(Tolerance, ItsFormulaInWordsNamesTheTermsOfEachPrecision) {
  const std::string fp32 = tolerance_formula(false), tf32 = tolerance_formula(true);
  EXPECT_NE(fp32.find("8 K u max|A| max|B| + 2 K u max|ref|"), std::string::npos) << fp32;
  EXPECT_EQ(fp32.find("sqrt(K)"), std::string::npos) << fp32;
  EXPECT_NE(tf32.find("(8 K u + 4 sqrt(K) 2^-10) max|A| max|B| + (2 K u + 3 * 2^-10) max|ref|"),
            std::string::npos)
      << tf32;
}
