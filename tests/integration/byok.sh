#!/usr/bin/env bash
# Bring your own kernel: every kernel in tests/fixtures/byok goes through `specgen task
# init` (what it infers is checked) and compiles with NVRTC for sm_90a (no GPU needed).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/byok_lib.bash"
cd "$SPECGEN_ROOT"
fx=tests/fixtures/byok
t=$TMPDIR_TEST

if ! "$SPECGEN" validate suites/demo/vector_scale --device cuda --compile-only --arch sm_90a >/dev/null 2>&1; then
    skip "byok: task init + NVRTC" "NVRTC is not available here"
    exit 0
fi

init() { "$SPECGEN" task init "$@" 2>&1; }
# compiles DIR: NVRTC on the task folder DIR. A folder whose files are byte for byte those of
# one compiled before in this script (the fixture loop at the end makes each fixture's task
# again) gets that compile's output and status: NVRTC is deterministic, and it cost 0.3-2 s
# of CPU a kernel.
compiles() {
    local key out rc
    key=$(cd "$1" && for f in *; do printf '%s\n' "$f"; cat "$f"; done | md5sum | cut -c1-32)
    if [ -f "$t/compiled.$key" ]; then
        cat "$t/compiled.$key"
        return "$(cat "$t/compiled.$key.rc")"
    fi
    out=$("$SPECGEN" validate "$1" --device cuda --compile-only --arch sm_90a 2>&1)
    rc=$?
    printf '%s\n' "$out" >"$t/compiled.$key"
    echo "$rc" >"$t/compiled.$key.rc"
    printf '%s\n' "$out"
    return "$rc"
}

check_output "bf16 through a typedef: out/in bf16, one thread per element" \
    'buffer out: out bf16.*buffer inp: in bf16' bash -c "$(declare -f init); init $fx/gelu_bf16.cu --out $t/gelu | tr '\n' ' '"
check_output "the bf16 task compiles for sm_90a" '^compiled' compiles $t/gelu
check_output "AdamW's read-then-written buffers are inout, the gradient an input" \
    'buffer p: inout.*buffer g: in f32.*buffer m: inout.*buffer v: inout' \
    bash -c "$(declare -f init); init $fx/adam_inplace.cu --out $t/adam | tr '\n' ' '"
check_output "and its float scalars get their usual values" '"value": 0.999' cat $t/adam/task.json
check_output "one warp per row: the launch covers N*32 threads, counts N*C" \
    'count of out: N\*C.*grid=ceil_div\(\(N\)\*32,256\)' bash -c "$(declare -f init); init $fx/softmax_rows_cg.cu --out $t/sm | tr '\n' ' '"
check_output "cooperative_groups and <float.h> compile under NVRTC" '^compiled' compiles $t/sm
check_output "__launch_bounds__ gives the block; a block per row; out has N elements" \
    'count of out: N elements.*count of inp: N\*C.*grid=N block=256' \
    bash -c "$(declare -f init); init $fx/rowsum_cub.cu --out $t/cub | tr '\n' ' '"
check_output "<cub/cub.cuh> (BlockReduce) compiles under NVRTC" '^compiled' compiles $t/cub
check_output "float4 buffers are f32 with four elements each" 'count of y: 4\*n4' \
    init $fx/scale_float4.cu --out $t/f4
check_output "the float4 task compiles" '^compiled' compiles $t/f4
check_output "a template gets float, said as a guess" 'template axpy<float>: the arguments are a guess' \
    init $fx/axpy_template.cu --out $t/tpl
check_output "and launches through its name expression" '^compiled' compiles $t/tpl
check_output "--kernel NAME<ARGS> instantiates the template (f16)" 'buffer y: inout f16' \
    init $fx/axpy_template.cu --kernel 'axpy<__half>' --out $t/tplh
check_output "the __half instance compiles" '^compiled' compiles $t/tplh
check_output "several kernels: init says which it took and how to pick" \
    'the file has 2 kernels \(clear, row_max\); took clear: pick another with --kernel NAME' \
    init $fx/two_kernels_smem.cu --out $t/two
check_output "--kernel picks the second; extern __shared__ gives smem=" \
    'launch: row_max grid=N block=256 smem=256\*4' init $fx/two_kernels_smem.cu --kernel row_max --out $t/two2
check_output "INFINITY, INT_MAX, uint8_t, M_PI with <math.h> <climits> <cstdint> compile" '^compiled' compiles $t/two2
check_fails "init into an existing task folder fails" 1 "$SPECGEN" task init $fx/two_kernels_smem.cu --out $t/two2
check_output "and says --force" 'already exists: pass --force' init $fx/two_kernels_smem.cu --out $t/two2
check_output "--force overwrites; --count and --launch are taken as given" \
    'count of out: N elements' \
    init $fx/two_kernels_smem.cu --kernel row_max --out $t/two2 --force --count out=N --launch "grid=N block=128 smem=128*4"
check_output "the given launch line is in the baseline" '^//@launch row_max grid=N block=128 smem=128\*4' head -1 $t/two2/baseline.cu
check_output "--count names that are no parameter become sizes" '"V": 77' \
    bash -c "$SPECGEN task init $fx/two_kernels_smem.cu --kernel row_max --out $t/two3 --count inp=V*C --size V=77 >/dev/null && cat $t/two3/task.json"
check_output "uint8_t* is a u8 buffer; bins indexed by data values need --count" \
    'count of bins: n elements \(indexed by values read from memory: unknown\).*buffer data: in u8' \
    bash -c "$(declare -f init); init $fx/histogram_u8.cu --out $t/h | tr '\n' ' '"
check_output "  ... with --count bins=256 it is inout u32 (atomicAdd reads it)" 'buffer bins: inout u32' \
    init $fx/histogram_u8.cu --count bins=256 --out $t/h2
check_output "  ... and compiles" '^compiled' compiles $t/h2
check_output "a CUDA task's next: hint names --device cuda and --compile-only" \
    'validate .* --device cuda --compile-only --arch sm_90a' init $fx/gelu_bf16.cu --out $t/gelu2
check_output "bool* is u8, and init says so" 'type of mask: bool is stored as u8.*buffer mask: in u8' \
    bash -c "$(declare -f init); init $fx/mask_bool.cu --out $t/mask | tr '\n' ' '"
check_output "  ... its inputs are 0 or 1" '"init": "randint\(0,1\)"' cat $t/mask/task.json
check_output "int8_t* is i8" 'buffer q: out i8' init $fx/quant_int8.cu --out $t/q8

# Several kernels launched in order: partial_sum writes partial, finish_sum reads it.
check_output "two kernels sharing a buffer: init says they are launched in order, partial is scratch" \
    'launched in order \(partial_sum, finish_sum\): scratch between them: partial' init $fx/two_pass_sum.cu --out $t/chain
check_output "  ... and writes the plan: //@scratch with the first grid, two //@launch with args=" \
    '^//@scratch partial f32 ceil_div\(n,256\)\|//@launch partial_sum grid=ceil_div\(n,256\) block=256 args=x,partial,n\|//@launch finish_sum grid=1 block=256 args=partial,out,nblocks\|$' \
    bash -c "head -3 $t/chain/baseline.cu | tr '\\n' '|'"
check_output "  ... finish's bound is the scratch's count, not a free size" '"value": "ceil_div\(n,256\)"' cat $t/chain/task.json
check_output "  ... out has one element (only out[0] is written)" 'count of out: 1 elements' init $fx/two_pass_sum.cu --out $t/chain_r --force
check_output "  ... the two-launch task compiles" '^compiled' compiles $t/chain
if command -v clinfo >/dev/null && clinfo -l 2>/dev/null | grep -q Platform; then
    check_output "the OpenCL two-pass sum: init's plan validates on PoCL" '^pass: all [0-9]+ checks passed' \
        bash -c "$SPECGEN task init $fx/two_pass_sum.cl --out $t/chaincl >/dev/null && $SPECGEN validate $t/chaincl --device opencl"
    # OpenCL's vload* / vstore* built-ins read and write their last (pointer) argument.
    check_output "OpenCL half* through vload_half / vstore_half_rte: init needs no hint; y out f16, x in f16" \
        'buffer x: in f16.*buffer y: out f16' bash -c "$(declare -f init); init $fx/half_scale.cl --out $t/halfcl | tr '\n' ' '"
    check_output "  ... one thread per element, n elements each" \
        'count of x: n elements.*count of y: n elements.*grid=ceil_div\(n,256\)' \
        bash -c "$(declare -f init); init $fx/half_scale.cl --out $t/halfcl --force | tr '\n' ' '"
    check_output "  ... and the task validates on PoCL" '^pass: all [0-9]+ checks passed' \
        "$SPECGEN" validate $t/halfcl --device opencl
    sed 's/2.0f \*/3.0f */' $t/halfcl/baseline.cl >$t/half3.cl
    check_output "  ... where a kernel scaling by 3 is a mismatch in y" '^mismatch: wrong result in output y' \
        "$SPECGEN" validate $t/halfcl $t/half3.cl --device opencl
    check_output "vload4 / vstore4 on float*: f32, four elements per offset (4*n4)" \
        'count of x: 4\*n4 elements \(vloadN / vstoreN.*count of y: 4\*n4.*buffer y: out f32' \
        bash -c "$(declare -f init); init $fx/scale_vload4.cl --out $t/v4cl | tr '\n' ' '"
    check_output "  ... and validates on PoCL" '^pass: all [0-9]+ checks passed' \
        "$SPECGEN" validate $t/v4cl --device opencl
else
    skip "the OpenCL two-pass sum, half and vload4 kernels on PoCL" "no OpenCL platform"
fi
sed 's/partial\[blockIdx.x\] = s\[0\]/*(partial + blockIdx.x) = s[0]/' $fx/two_pass_sum.cu >$t/opaque.cu
check_output "a chain whose scratch size cannot be read: init asks for --launch, showing what to write" \
    "give the plan, e.g. --launch '//@scratch partial f32 COUNT; //@launch partial_sum grid=ceil_div\(n,256\) block=256 args=x,partial,n; //@launch finish_sum" \
    init $t/opaque.cu --out $t/opaque
plan='//@scratch partial f32 ceil_div(n,256); //@launch partial_sum grid=ceil_div(n,256) block=256 args=x,partial,n; //@launch finish_sum grid=1 block=256 args=partial,out,nblocks'
check_output "  ... and takes the plan given so" 'scalar nblocks: i32 = ceil_div\(n,256\)' init $t/opaque.cu --out $t/opaque --launch "$plan"
check_output "  ... which compiles" '^compiled' compiles $t/opaque
check_output "one launch for a chain is refused, saying how to give the plan" \
    'is one launch, and .* kernels are launched in order: give the plan as --launch' \
    init $fx/two_pass_sum.cu --out $t/chain1 --launch "grid=1 block=32"
# --launch on a file that already has a //@launch line replaces it, with a note.
check_output "--launch on a file with a //@launch line: a note says it is replaced" \
    'note: --launch replaces the file.s 1 //@launch line' \
    init $t/gelu/baseline.cu --out $t/relaunch --launch "grid=ceil_div(N,128) block=128"
check_output "  ... the baseline has the given line only" '^1 //@launch gelu grid=ceil_div\(N,128\) block=128$' \
    bash -c "grep -c '^//@launch' $t/relaunch/baseline.cu | tr '\n' ' '; grep '^//@launch' $t/relaunch/baseline.cu"

# A broken baseline's log names baseline.cu, not the candidate's name.
mkdir -p $t/broken && cp $t/gelu/task.json $t/broken/ && sed 's/tanhf(/tanhf_nope(/' $t/gelu/baseline.cu >$t/broken/baseline.cu && cp $t/gelu/reference.cu $t/broken/
check_output "a baseline's compile log names baseline.cu" 'baseline.cu\([0-9]+\): error' compiles $t/broken

# Every fixture: init with the hint its README row gives (if any) and compile; count them.
n=0 ok=0 nohint=0 listed=0
for f in $fx/*.cu; do
    n=$((n + 1))
    b=$(basename $f)
    grep -q "^| $b |" $fx/README.md && listed=$((listed + 1))
    d=$t/all_${b%.cu}
    h=$(byok_hint "$b")
    if byok_init $f $d >/dev/null 2>&1 && compiles "$d" | grep -q '^compiled'; then
        ok=$((ok + 1))
        [ -z "$h" ] && nohint=$((nohint + 1))
    else
        echo "# failed: $b (hint: ${h:-none})"
    fi
done
check_output "the fixtures README lists every fixture kernel ($listed of $n)" "^$n\$" echo $listed
check_output "the hinted 2-D fixture has its 2-D launch" '^//@launch transpose_tiled grid=ceil_div\(C,32\),ceil_div\(R,32\) block=32,8$' \
    head -1 $t/all_transpose_2d/baseline.cu
check_output "at least 20 fixture kernels" '^([2-9][0-9]|[1-9][0-9][0-9])$' echo $n
check_output "every fixture kernel goes through init (with its listed hint) + NVRTC ($ok of $n; $nohint with no hint)" "^$n\$" echo $ok
finish
