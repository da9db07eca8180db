package libtorch

import "unsafe"

// These mirror shim/gosr_torch.h. The shim allocates them; Go writes
// arguments into them and reads results, so a call passes one pointer.

const maxDim = 8

type cTensor struct {
	data    uintptr
	dtype   int64
	ndim    int64
	sizes   [maxDim]int64
	strides [maxDim]int64
	// c10::DeviceType (0 CPU, 1 CUDA) and index (-1 for the CPU).
	deviceType, deviceIndex int32
}

type cArg struct {
	tag int32
	len int32
	i   int64
	d   float64
	p   uintptr
}

type cRet struct {
	cArg
	dtype   int64
	ndim    int64
	sizes   [maxDim]int64
	strides [maxDim]int64
	alias   int64
	offset  int64
}

type cHdr struct {
	tensors    uintptr
	tensorsCap int64
	args       uintptr
	argsCap    int64
	rets       uintptr
	nrets      int64
	nargs      int64
	nin        int64
	nout       int64
}

const (
	tagNone = iota
	tagTensor
	tagInt
	tagDouble
	tagBool
	tagIntList
	tagDoubleList
	tagTensorList
	tagOptTensorList
	tagString
	tagDevice
	tagBoolList
)

// Sizes the C side must agree on (checked by a test against the header).
var abiSizes = map[string]uintptr{
	"gosr_tensor": unsafe.Sizeof(cTensor{}),
	"gosr_arg":    unsafe.Sizeof(cArg{}),
	"gosr_ret":    unsafe.Sizeof(cRet{}),
	"gosr_hdr":    unsafe.Sizeof(cHdr{}),
}
