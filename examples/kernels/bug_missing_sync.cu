// Bug 1 of 3: the second __syncthreads() is missing.
//
// After the inner product loop a fast warp goes straight on to the next step and overwrites As and Bs while
// slower warps of the same block are still reading the old tiles: a shared-memory race. Whether it corrupts
// C depends on how the warps happen to drift apart, so a run may pass and the next one fail.
//
// What TileScope shows:
//     tilescope run --kernel-file examples/kernels/bug_missing_sync.cu --size 2048 --tile 32
//   - the result often still PASSes (wrong elements appear only where warps drifted apart, most often at
//     TILE_WIDTH 32, where a block has 32 warps): a race is not proven by a result that may vary;
//   - "Check with compute-sanitizer" in the window (or the same command with --sanitize) runs it once under
//     racecheck, which reports the shared-memory hazards between the writes to As and Bs at the top of the
//     loop and the reads in the inner product: that is the proof;
//   - with a single step (N <= TILE_WIDTH) there is no next tile to overwrite: no race, a clean report.
// The built-in teaching kernel `tiled_nosync` is the same bug.
#define TILE_WIDTH 16

__global__ void matmul_kernel(float* C, float* A, float* B, int N)
{
    __shared__ float As[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Bs[TILE_WIDTH][TILE_WIDTH];

    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;
    float sum = 0.0f;

    for (int t = 0; t < (N + TILE_WIDTH - 1) / TILE_WIDTH; ++t) {
        As[ty][tx] = (row < N && t * TILE_WIDTH + tx < N) ? A[row * N + t * TILE_WIDTH + tx] : 0.0f;
        Bs[ty][tx] = (col < N && t * TILE_WIDTH + ty < N) ? B[(t * TILE_WIDTH + ty) * N + col] : 0.0f;
        __syncthreads();

        for (int k = 0; k < TILE_WIDTH; ++k)
            sum += As[ty][k] * Bs[k][tx];
        // BUG: no __syncthreads() here
    }
    if (row < N && col < N)
        C[row * N + col] = sum;
}
