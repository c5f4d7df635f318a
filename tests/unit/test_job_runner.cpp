// The window's background jobs (app/core/engine/job_runner.hpp): one runner knows every job in flight, from
// its start until its result is taken; a job's result (or what it threw) is taken once. No clocks: each job
// waits for a promise the test keeps.
#include <future>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "core/engine/job_runner.hpp"

using namespace ts;

TEST(JobRunner, AJobIsInFlightFromItsStartUntilItsResultIsTaken) {
  JobRunner runner;
  JobRunner::Job<int> job(runner, kJobBandwidth);
  EXPECT_FALSE(job.in_flight());
  EXPECT_TRUE(runner.report().running.empty());
  std::promise<void> go;
  std::shared_future<void> gate = go.get_future().share();
  job.start([gate] {
    gate.wait();
    return 42;
  });
  EXPECT_TRUE(job.in_flight());
  EXPECT_TRUE(runner.report().has(kJobBandwidth));
  EXPECT_FALSE(job.ready()) << "it waits for the test's promise";
  EXPECT_THROW(job.start([] { return 1; }), std::logic_error) << "one job of a kind at a time";
  go.set_value();
  EXPECT_EQ(job.take(), 42);
  EXPECT_FALSE(job.in_flight());
  EXPECT_FALSE(runner.report().has(kJobBandwidth));
  EXPECT_EQ(runner.started_count(), 1u);
}

TEST(JobRunner, WhatAJobThrowsIsTakenAsItsResultAndTheJobIsDone) {
  JobRunner runner;
  JobRunner::Job<std::string> job(runner, kJobSaveC);
  job.start([]() -> std::string { throw std::runtime_error("disk full"); });
  try {
    job.take();
    ADD_FAILURE() << "the job's exception was lost";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "disk full");
  }
  EXPECT_FALSE(job.in_flight());
  EXPECT_TRUE(runner.report().running.empty());
}

TEST(JobRunner, TheReportNamesEveryJobInFlightAndTheEnginesOwn) {
  JobRunner runner;
  JobRunner::Job<int> build(runner, kJobBuildKernel), tiles(runner, kJobBuildTiles);
  std::promise<void> go;
  std::shared_future<void> gate = go.get_future().share();
  build.start([gate] {
    gate.wait();
    return 1;
  });
  tiles.start([gate] {
    gate.wait();
    return 2;
  });
  const JobReport r = runner.report({{kJobRun, true}, {kJobSweep, false}});
  EXPECT_TRUE(r.has(kJobRun));
  EXPECT_FALSE(r.has(kJobSweep));
  EXPECT_TRUE(r.has(kJobBuildKernel));
  EXPECT_TRUE(r.has_any({kJobSanitize, kJobBuildTiles}));
  EXPECT_FALSE(r.has_any({kJobSanitize, kJobReadKernel}));
  go.set_value();
  build.discard();  // a newer build replaces it: waited for, its result dropped
  EXPECT_FALSE(runner.report().has(kJobBuildKernel));
  EXPECT_TRUE(runner.report().has(kJobBuildTiles)) << "not taken yet";
  EXPECT_EQ(tiles.take(), 2);
  EXPECT_TRUE(runner.report().running.empty());
}
