// Package gemm is a single-threaded float32 matrix multiply,
// C = alpha*A*B + beta*C, in the BLIS style: the operands are packed
// into panels a small micro-kernel streams through, and the blocking
// keeps each packed block in the cache level it is reused from. The
// kernels ops runs for linear, matmul, bmm, baddbmm, einsum, attention,
// the RNN cells and convolution (2-d, 3-d, transposed) all come here.
//
// # Operands
//
// A is m x k, B is k x n, C is m x n. A and B are strided views (Mat):
// element (i, j) is Data[Off + i*RS + j*CS], so a row-major matrix has
// CS 1, a column-major one (a transposed operand) RS 1, and any other
// strides work too. A transposed operand is packed straight from its
// storage, never copied first; Mat.T swaps the strides. C is row-major
// with row stride ldc, starting at c[coff]; columns past n in a row are
// never touched. With beta 0, C is overwritten, not scaled (NaNs in it
// do not propagate), as BLAS and PyTorch do.
//
// B may instead be the implicit im2col matrix of one image (ConvSrc):
// row p is (channel, kz, ki, kj), column j is the output position
// (od, oh, ow), and element (p, j) is the input at
// (od*StrD + kz*DilD - PadD, oh*StrH + ki*DilH - PadH,
// ow*StrW + kj*DilW - PadW), or 0 where that lies in the padding. It is
// packed from the image directly, never materialised. A 2-d convolution
// has depth 1.
//
// # Blocking and packed layouts
//
// The micro-kernel computes one MR x NR (6 x 16) tile of C from an
// MR-row panel of A and an NR-column panel of B. Around it:
//
//	for jc over n in steps of NC (1024):      B block KC x NC, in L2
//	  for pc over k in steps of KC (256):     pack B rows pc.., cols jc..
//	    for ic over m in steps of MC (72):    A block MC x KC, in L2
//	      pack A rows ic.., cols pc..
//	      for each NR-column panel, each MR-row panel: micro-kernel
//
// A packed B block is ceil(nc/NR) panels one after the other; panel r
// holds columns [r*NR, r*NR+NR) k-major: element (q, j) of the panel
// is at q*NR + j, and columns past nc are zero. A packed A block is
// ceil(mc/MR) panels; panel r holds rows [r*MR, r*MR+MR) k-major:
// element (i, q) at q*MR + i, alpha already applied, rows past mc zero.
// Edge tiles (fewer than MR rows or NR columns of C left) run the full
// kernel into a zeroed tile and add its valid part to C, so the kernel
// never reads or writes out of bounds.
//
// Some cases skip parts of this. A row-major A block (alpha 1) times
// only one or two B panels, or of fewer than 2*MR rows, is read in place by a
// 4 x 16 kernel (packing it would cost more than it saves). A product
// with n 1 or m 1 is a matrix-vector product, and a tiny one (m*n up to
// 64) of a row-major A and a column-major B is m*n dot products.
//
// A constant operand (a weight) can be packed once, at preparation:
// PrepackB and PrepackA build the blocks above for every (jc, pc) or
// (pc, ic) block, read-only afterwards, so all runtimes share them.
//
// # Epilogues and wide convolutions
//
// GemmEpilogue and the other ...Epilogue entry points take an Epilogue:
// a bias per row (a convolution's output channel) or per column (a
// linear layer's output feature), a residual laid out as C, a clamp
// (relu, relu6) and an activation. With the assembly, the last k block's
// micro-kernel adds a per-row bias and the residual and clamps as it
// stores each full tile (kernel6x16EpiAVX2, see tileEpi); the rest (edge
// tiles, per-column biases, activations) is applied to each MC x NC
// block of C as the last k block finishes it, while it is in cache.
// With beta 0 the first k block stores its tiles rather than adding
// them, so C is neither cleared nor filled first.
//
// ConvWide computes a convolution without packing B: see [Wide
// convolution] in wide.go for its layout.
//
// # Rows kernels
//
// With AVX-512, PointwiseRows (a pointwise convolution) and
// ConvWideRows (a convolution with few taps, a network's stem) pack
// neither operand: one kernel takes eight output channels and 32
// positions at a time straight from input rows and the weight's rows
// (see [Wide rows] in rows.go).
//
// # Kernel variants
//
// On amd64 where the CPU has AVX2 and FMA (and the OS saves the YMM
// registers), the micro-kernels and the vector helpers are assembly;
// otherwise, and in builds tagged purego, they are pure Go. Where the
// CPU also has AVX-512 (and the OS saves the ZMM registers), full B
// panels are walked in pairs through 6x32 kernels (see [AVX-512 tiles]
// in gemm512_amd64.go), whose results are bit for bit the AVX2
// kernels'. The Go and assembly variants compute the same products in
// float32; they may differ in rounding (FMA, summation order), within a
// float32 dot product's error bound. The conformance tests run every
// variant against a float64 reference, and TestPairsBitForBit the
// paired walks against the single one.
//
// # Scratch
//
// The packing buffers (about 1.1 MiB) live in a Scratch. Each runtime
// owns one, which all its kernels share: a runtime runs its kernels on
// one goroutine at a time, so a Scratch is never used by two goroutines
// at once and is never shared across runtimes. A nil *Scratch borrows
// buffers from a free list shared by the process for the duration of
// one call, which is safe from any goroutine.
//
// # Intra-op parallelism
//
// A Scratch from NewScratch(team) splits a product of more than a few
// hundred thousand multiply-adds across the goroutines of an
// ops/parallel team (parallel.go): along its columns in chunks of whole
// NR panels, or, with few columns, along its rows in chunks of whole MR
// panels with B packed once (by blocks, across the team) and shared.
// Each goroutine packs into buffers of its own. The chunks lie on the
// whole product's blocking grid, so each tile of C is computed exactly
// as one goroutine computes it: the result is bit for bit the same.
package gemm
