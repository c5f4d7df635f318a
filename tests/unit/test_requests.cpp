// The window's typed requests (ui/requests.hpp): at most one pending of each kind, the newest wins, and each
// is taken once by whoever carries it out.
#include <gtest/gtest.h>

#include "ui/requests.hpp"

using namespace ts;
using namespace ts::ui;

TEST(Requests, EachKindIsTakenOnceAndAskingTwiceRunsOnce) {
  Requests q;
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.take<rq::Run>());
  q.push(rq::Run{});
  q.push(rq::Run{});  // Space and the Run button in one frame: one run
  q.push(rq::SaveC{});
  EXPECT_TRUE(q.pending<rq::Run>());
  EXPECT_TRUE(q.take<rq::Run>());
  EXPECT_FALSE(q.take<rq::Run>()) << "taken once";
  EXPECT_TRUE(q.pending<rq::SaveC>()) << "another kind stays pending";
  EXPECT_FALSE(q.pending<rq::Quit>());
  EXPECT_TRUE(q.take<rq::SaveC>());
  EXPECT_TRUE(q.empty());
}

TEST(Requests, TheNewestRequestOfAKindReplacesTheOlderOne) {
  Requests q;
  SweepSpec a, b;
  a.sizes = {256, 512};
  b.sizes = {1024};
  q.push(rq::StartSweep{a});
  q.push(rq::CheckGl{"at start"});
  q.push(rq::StartSweep{b});
  ASSERT_NE(q.peek<rq::StartSweep>(), nullptr);
  EXPECT_EQ(q.peek<rq::StartSweep>()->plan.sizes, (std::vector<int64_t>{1024}));
  EXPECT_TRUE(q.pending<rq::StartSweep>()) << "peek leaves it pending";
  const auto sweep = q.take<rq::StartSweep>();
  ASSERT_TRUE(sweep);
  EXPECT_EQ(sweep->plan.sizes, (std::vector<int64_t>{1024}));
  EXPECT_FALSE(q.take<rq::StartSweep>()) << "the older plan is gone with it";
  const auto gl = q.take<rq::CheckGl>();
  ASSERT_TRUE(gl);
  EXPECT_EQ(gl->trigger, "at start");
  q.push(rq::CloseOverlay{2});
  q.push(rq::CloseOverlay{1});
  EXPECT_EQ(q.take<rq::CloseOverlay>()->index, 1u);
}
