package passes

// FakeFunctional lets the external tests check the fake op set against ops.
var FakeFunctional = fakeFunctional
