// Bug 3 of 3: "A and B are symmetric, so C is too": compute the upper triangle of C and mirror it.
//
// A block on or above the diagonal computes its tile as usual and writes every element (row, col) with
// col >= row twice: at (row, col) and at (col, row). Blocks below the diagonal do nothing. It halves the
// work, and it is wrong: for symmetric A and B, (A B)^T = B^T A^T = B A, which is not A B unless A and B
// commute. So the mirrored lower triangle holds B A.
//
// What TileScope shows:
//     tilescope run --kernel-file examples/kernels/bug_symmetric.cu --size 1024 --input symmetric
//   - FAIL, and the error heatmap is a triangle: zero on and above the diagonal, non-zero below it;
//   - the same triangle with random inputs (where the assumption is not even plausible);
//   - N is the only size it is told, so it runs on square shapes (the window says so).
// The built-in teaching kernel `tiled_mirror` is the same bug.
#define TILE_WIDTH 16

__global__ void symm_matmul(const float* A, const float* B, float* C, int N)
{
    __shared__ float As[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Bs[TILE_WIDTH][TILE_WIDTH];

    if (blockIdx.x < blockIdx.y)
        return;  // BUG: "the mirror fills the lower triangle in"

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
        __syncthreads();
    }
    if (row < N && col < N && col >= row) {
        C[row * N + col] = sum;
        C[col * N + row] = sum;  // BUG: C is not symmetric
    }
}
