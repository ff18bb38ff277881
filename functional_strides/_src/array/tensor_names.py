"""The ``torch.Tensor`` names that ``StridedArray`` leaves out, with the JAX way for each.

A data table, read by ``StridedArray.__getattr__``: a ``torch.Tensor`` name either does on a
``StridedArray`` what it does in PyTorch (the view ops and view metadata), or is absent, and
asking for it raises ``AttributeError`` naming the JAX spelling. PyTorch's in-place methods
that a ``StridedArray`` over a ``jax.Ref`` has (``copy_``, ``add_``, ...) are absent on the
others, and their hint names both the functional ``x.at[idx]`` and ``fs.from_ref``. The names are the public
ones of ``dir(torch.Tensor)`` (torch 2.13) minus those ``StridedArray`` implements;
``tests/test_surface.py`` checks the table against the installed ``torch``, and that every
``jnp``/``jax`` function a hint names exists. Pure data: no ``jax`` import.

Each entry is ``name -> (category, hint)``; the category picks the reason in the message
(:data:`REASONS`), the hint is the code to write instead, ``x`` standing for the array.
"""

from __future__ import annotations

__all__ = ["PROPERTIES", "REASONS", "TABLE", "message"]

#: Why the name is absent, per category, and the words that introduce the hint.
REASONS: dict[str, tuple[str, str]] = {
    "op": ("is not a view op", "Materialise and use jnp"),
    "write": ("writes in place, and JAX arrays are immutable", "Write functionally"),
    "cast": ("is a dtype cast, not a view op", "Materialise and cast"),
    "device": ("moves data between devices, not a view op", "Use"),
    "grad": ("belongs to PyTorch's autograd", "JAX differentiates functions"),
    "view": ("is spelled differently here", "Use"),
    "meta": ("is not view metadata", "Use"),
    "none": ("has no JAX counterpart", "Instead"),
}


def _group(category: str, template: str, names: str) -> dict[str, tuple[str, str]]:
    return {n: (category, template.format(name=n)) for n in names.split()}


_A = "jnp.asarray(x)"

#: ``torch.Tensor`` names that are properties there (attributes, not methods).
PROPERTIES = frozenset("""
    H data device grad grad_dtype grad_fn imag is_cpu is_cuda is_ipu is_leaf is_maia is_meta is_mkldnn
    is_mps is_mtia is_nested is_quantized is_sparse is_sparse_csr is_vulkan is_xla is_xpu itemsize mH
    name nbytes output_nr real requires_grad retains_grad volatile
""".split())

TABLE: dict[str, tuple[str, str]] = {
    # -- jax.Array methods of the same name ---------------------------------------------------
    **_group("op", _A + ".{name}(axis=...)",
             "all any argmax argmin argsort cumprod cumsum max mean min prod sort sum"),
    **_group("op", _A + ".{name}(...)", "clip conj dot nonzero round take trace"),
    **_group("op", _A + ".{name}(axis=..., ddof=1)", "std var"),
    # -- jnp functions of the same name --------------------------------------------------------
    **_group("op", "jnp.{name}(" + _A + ", ...)", """
        abs absolute acos acosh allclose amax amin angle arccos arccosh arcsin arcsinh arctan arctan2
        arctanh argwhere asin asinh atan atan2 atanh bincount bitwise_and bitwise_left_shift bitwise_not
        bitwise_or bitwise_right_shift bitwise_xor ceil copysign corrcoef cos cosh count_nonzero cov cross
        deg2rad diag diagflat diff exp exp2 expm1 float_power floor floor_divide fmax
        fmin fmod frexp gcd greater greater_equal heaviside histogram hypot i0 inner isclose isfinite isinf
        isnan isneginf isposinf isreal kron lcm ldexp less less_equal log log10 log1p log2 logaddexp
        logaddexp2 logical_and logical_not logical_or logical_xor maximum median minimum multiply
        nan_to_num nanmean nanmedian nanquantile nansum negative nextafter not_equal outer positive pow
        quantile rad2deg reciprocal remainder roll rot90 sign signbit sin sinc sinh sqrt square subtract
        tan tanh tile tril triu true_divide trunc unique vdot
    """),
    # -- operators (they materialise and return a jax.Array) -----------------------------------
    "add": ("op", "x + other (operators materialise), or jnp.add(" + _A + ", other)"),
    "sub": ("op", "x - other, or jnp.subtract(" + _A + ", other)"),
    "mul": ("op", "x * other, or jnp.multiply(" + _A + ", other)"),
    "div": ("op", "x / other, or jnp.divide(" + _A + ", other)"),
    "divide": ("op", "x / other, or jnp.divide(" + _A + ", other)"),
    "neg": ("op", "-x, or jnp.negative(" + _A + ")"),
    "eq": ("op", "x == other (elementwise), or jnp.equal(" + _A + ", other)"),
    "ne": ("op", "x != other, or jnp.not_equal(" + _A + ", other)"),
    "lt": ("op", "x < other, or jnp.less(" + _A + ", other)"),
    "le": ("op", "x <= other, or jnp.less_equal(" + _A + ", other)"),
    "gt": ("op", "x > other, or jnp.greater(" + _A + ", other)"),
    "ge": ("op", "x >= other, or jnp.greater_equal(" + _A + ", other)"),
    "matmul": ("op", "x @ other, or jnp.matmul(" + _A + ", other)"),
    "mm": ("op", "x @ other, or jnp.matmul(" + _A + ", other)"),
    "bmm": ("op", "x @ other, or jnp.matmul(" + _A + ", other)"),
    "mv": ("op", "x @ vec, or jnp.matmul(" + _A + ", vec)"),
    "ger": ("op", "jnp.outer(" + _A + ", other)"),
    # -- other jnp / jax spellings -------------------------------------------------------------
    "addbmm": ("op", "beta * c + alpha * jnp.sum(" + _A + " @ b, axis=0)"),
    "addcdiv": ("op", "x + value * t1 / t2"),
    "addcmul": ("op", "x + value * t1 * t2"),
    "addmm": ("op", "beta * x + alpha * (m1 @ m2)"),
    "addmv": ("op", "beta * x + alpha * (mat @ vec)"),
    "addr": ("op", "beta * x + alpha * jnp.outer(v1, v2)"),
    "baddbmm": ("op", "beta * x + alpha * (b1 @ b2)"),
    "aminmax": ("op", "(jnp.min(" + _A + ", axis=...), jnp.max(" + _A + ", axis=...))"),
    "clamp": ("op", "jnp.clip(" + _A + ", min, max)"),
    "clamp_min": ("op", "jnp.maximum(" + _A + ", min)"),
    "clamp_max": ("op", "jnp.minimum(" + _A + ", max)"),
    "conj_physical": ("op", "jnp.conj(" + _A + ")"),
    "cummax": ("op", "jax.lax.cummax(" + _A + ", axis=...)"),
    "cummin": ("op", "jax.lax.cummin(" + _A + ", axis=...)"),
    "logcumsumexp": ("op", "jax.lax.cumlogsumexp(" + _A + ", axis=...)"),
    "det": ("op", "jnp.linalg.det(" + _A + ")"),
    "logdet": ("op", "jnp.linalg.slogdet(" + _A + ")"),
    "slogdet": ("op", "jnp.linalg.slogdet(" + _A + ")"),
    "inverse": ("op", "jnp.linalg.inv(" + _A + ")"),
    "pinverse": ("op", "jnp.linalg.pinv(" + _A + ")"),
    "cholesky": ("op", "jnp.linalg.cholesky(" + _A + ")"),
    "cholesky_inverse": ("op", "jax.scipy.linalg.cho_solve((" + _A + ", True), jnp.eye(n))"),
    "cholesky_solve": ("op", "jax.scipy.linalg.cho_solve((chol, True), " + _A + ")"),
    "eig": ("op", "jnp.linalg.eig(" + _A + ")"),
    "symeig": ("op", "jnp.linalg.eigh(" + _A + ")"),
    "svd": ("op", "jnp.linalg.svd(" + _A + ")"),
    "qr": ("op", "jnp.linalg.qr(" + _A + ")"),
    "geqrf": ("op", "jnp.linalg.qr(" + _A + ")"),
    "orgqr": ("op", "jnp.linalg.qr(" + _A + ")"),
    "ormqr": ("op", "jnp.linalg.qr(" + _A + ")"),
    "lstsq": ("op", "jnp.linalg.lstsq(a, " + _A + ")"),
    "solve": ("op", "jnp.linalg.solve(" + _A + ", b)"),
    "lu": ("op", "jax.scipy.linalg.lu_factor(" + _A + ")"),
    "lu_solve": ("op", "jax.scipy.linalg.lu_solve(lu_and_piv, " + _A + ")"),
    "triangular_solve": ("op", "jax.scipy.linalg.solve_triangular(a, " + _A + ")"),
    "matrix_exp": ("op", "jax.scipy.linalg.expm(" + _A + ")"),
    "matrix_power": ("op", "jnp.linalg.matrix_power(" + _A + ", n)"),
    "norm": ("op", "jnp.linalg.norm(" + _A + ")"),
    "dist": ("op", "jnp.linalg.norm(" + _A + " - other)"),
    "renorm": ("op", "jnp.linalg.norm(" + _A + ", axis=..., keepdims=True) and a division"),
    "digamma": ("op", "jax.scipy.special.digamma(" + _A + ")"),
    "erf": ("op", "jax.scipy.special.erf(" + _A + ")"),
    "erfc": ("op", "jax.scipy.special.erfc(" + _A + ")"),
    "erfinv": ("op", "jax.scipy.special.erfinv(" + _A + ")"),
    "lgamma": ("op", "jax.scipy.special.gammaln(" + _A + ")"),
    "polygamma": ("op", "jax.scipy.special.polygamma(n, " + _A + ")"),
    "mvlgamma": ("op", "jax.scipy.special.multigammaln(" + _A + ", p)"),
    "igamma": ("op", "jax.scipy.special.gammainc(" + _A + ", other)"),
    "igammac": ("op", "jax.scipy.special.gammaincc(" + _A + ", other)"),
    "logit": ("op", "jax.scipy.special.logit(" + _A + ")"),
    "xlogy": ("op", "jax.scipy.special.xlogy(" + _A + ", other)"),
    "logsumexp": ("op", "jax.nn.logsumexp(" + _A + ", axis=...)"),
    "softmax": ("op", "jax.nn.softmax(" + _A + ", axis=...)"),
    "log_softmax": ("op", "jax.nn.log_softmax(" + _A + ", axis=...)"),
    "relu": ("op", "jax.nn.relu(" + _A + ")"),
    "sigmoid": ("op", "jax.nn.sigmoid(" + _A + ")"),
    "hardshrink": ("op", "jnp.where(jnp.abs(" + _A + ") > lambd, " + _A + ", 0)"),
    "prelu": ("op", "jnp.where(" + _A + " > 0, " + _A + ", weight * " + _A + ")"),
    "rsqrt": ("op", "jax.lax.rsqrt(" + _A + ")"),
    "sgn": ("op", "jnp.sign(" + _A + ")"),
    "fix": ("op", "jnp.trunc(" + _A + ")"),
    "frac": ("op", _A + " - jnp.trunc(" + _A + ")"),
    "lerp": ("op", "x + weight * (end - x)"),
    "equal": ("op", "jnp.array_equal(" + _A + ", other)"),
    "where": ("op", "jnp.where(condition, " + _A + ", other)"),
    "masked_fill": ("op", "jnp.where(mask, value, " + _A + ")"),
    "masked_select": ("op", _A + "[mask]"),
    "masked_scatter": ("op", _A + ".at[mask].set(source[:n])"),
    "gather": ("op", "jnp.take_along_axis(" + _A + ", index, axis=dim)"),
    "take_along_dim": ("op", "jnp.take_along_axis(" + _A + ", indices, axis=dim)"),
    "index_select": ("op", "jnp.take(" + _A + ", index, axis=dim)"),
    "index": ("op", _A + "[index]"),
    "index_put": ("op", _A + ".at[index].set(values)"),
    "index_add": ("op", _A + ".at[index].add(source)"),
    "index_copy": ("op", _A + ".at[index].set(source)"),
    "index_fill": ("op", _A + ".at[index].set(value)"),
    "index_reduce": ("op", _A + ".at[index].multiply/min/max(source)"),
    "scatter": ("op", _A + ".at[index].set(src)"),
    "scatter_add": ("op", _A + ".at[index].add(src)"),
    "scatter_reduce": ("op", _A + ".at[index].add/multiply/min/max(src)"),
    "put": ("op", "jnp.put(" + _A + ", index, source, inplace=False)"),
    "kthvalue": ("op", "jnp.sort(" + _A + ", axis=...)[..., k - 1]"),
    "topk": ("op", "jax.lax.top_k(" + _A + ", k)"),
    "mode": ("op", "jax.scipy.stats.mode(" + _A + ", axis=...)"),
    "msort": ("op", "jnp.sort(" + _A + ", axis=0)"),
    "histc": ("op", "jnp.histogram(" + _A + ", bins=..., range=(min, max))"),
    "repeat": ("op", "jnp.tile(" + _A + ", repeats)"),
    "repeat_interleave": ("op", "jnp.repeat(" + _A + ", repeats, axis=...)"),
    "resize": ("op", "jnp.resize(" + _A + ", shape)"),
    "resize_as": ("op", "jnp.resize(" + _A + ", other.shape)"),
    "sum_to_size": ("op", _A + ".sum(axis=..., keepdims=True)"),
    "unique_consecutive": ("op", "jnp.unique(" + _A + ") on sorted input"),
    "nonzero_static": ("op", "jnp.nonzero(" + _A + ", size=n)"),
    "stft": ("op", "jax.scipy.signal.stft(" + _A + ")"),
    "istft": ("op", "jax.scipy.signal.istft(" + _A + ")"),
    "diag_embed": ("op", "jax.vmap(jnp.diag)(" + _A + ")"),
    "narrow_copy": ("op", "x.narrow(dim, start, length).contiguous()"),
    "allclose": ("op", "jnp.allclose(" + _A + ", other)"),
    "bernoulli": ("op", "jax.random.bernoulli(key, " + _A + ")"),
    "multinomial": ("op", "jax.random.categorical(key, jnp.log(" + _A + "))"),
    "new": ("op", "jnp.empty(shape, x.dtype)"),
    "new_empty": ("op", "jnp.empty(shape, x.dtype)"),
    "new_empty_strided": ("op", "StridedArray(jnp.empty(n, x.dtype), Layout(shape, strides))"),
    "new_full": ("op", "jnp.full(shape, value, x.dtype)"),
    "new_ones": ("op", "jnp.ones(shape, x.dtype)"),
    "new_tensor": ("op", "jnp.asarray(data, x.dtype)"),
    "new_zeros": ("op", "jnp.zeros(shape, x.dtype)"),
    "apply_": ("op", "jax.vmap over " + _A + ", then x.at[...].set(values)"),
    "map_": ("op", "jax.vmap over " + _A + ", then x.at[...].set(values)"),
    "map2_": ("op", "jax.vmap over " + _A + ", then x.at[...].set(values)"),
    "as_strided_scatter": ("view", "fs.as_strided_scatter(x, src, size, stride, storage_offset)"),
    "diagonal_scatter": ("view", "fs.diagonal_scatter(x, src, offset, dim1, dim2)"),
    "select_scatter": ("view", "fs.select_scatter(x, src, dim, index)"),
    "slice_scatter": ("view", "fs.slice_scatter(x, src, dim, start, end, step)"),
    "slice_inverse": ("view", "fs.slice_scatter(x, src, dim, start, end, step)"),
    # -- dtype casts ---------------------------------------------------------------------------
    **{n: ("cast", _A + ".astype(jnp." + d + ")") for n, d in (
        ("float", "float32"), ("double", "float64"), ("half", "float16"), ("bfloat16", "bfloat16"),
        ("int", "int32"), ("long", "int64"), ("short", "int16"), ("char", "int8"), ("byte", "uint8"),
        ("bool", "bool_"), ("cfloat", "complex64"), ("cdouble", "complex128"), ("chalf", "complex64"))},
    "type": ("cast", _A + ".astype(dtype)"),
    "type_as": ("cast", _A + ".astype(other.dtype)"),
    # -- devices -------------------------------------------------------------------------------
    **_group("device", "jax.device_put(x, device) (moves the storage, keeps the layout); "
             "cast with " + _A + ".astype(dtype)", "to"),
    **_group("device", "jax.device_put(x, device) (moves the storage, keeps the layout)",
             "cpu cuda xpu ipu mtia pin_memory"),
    # -- autograd ------------------------------------------------------------------------------
    "detach": ("grad", "jax.lax.stop_gradient(x)"),
    "detach_": ("grad", "x = jax.lax.stop_gradient(x)"),
    **_group("grad", "jax.grad(f)(x.storage) or jax.vjp(f, x.storage), with f a function of the storage",
             """backward grad grad_dtype grad_fn requires_grad requires_grad_ retain_grad retains_grad
                is_leaf register_hook register_post_accumulate_grad_hook output_nr data volatile
                reinforce is_inference"""),
    # -- view ops and view metadata under other names ------------------------------------------
    "swapaxes": ("view", "x.transpose(dim0, dim1)"),
    "swapdims": ("view", "x.transpose(dim0, dim1)"),
    "moveaxis": ("view", "x.movedim(source, destination)"),
    "view_as": ("view", "x.view(other.shape)"),
    "reshape_as": ("view", "x.reshape(other.shape)"),
    "ravel": ("view", "x.reshape(-1)"),
    "split_with_sizes": ("view", "x.split(sizes, dim)"),
    "unsafe_split": ("view", "x.split(split_size, dim)"),
    "unsafe_split_with_sizes": ("view", "x.split(sizes, dim)"),
    "unsafe_chunk": ("view", "x.chunk(chunks, dim)"),
    "tensor_split": ("view", "x.split(sizes, dim)"),
    "hsplit": ("view", "x.split(sizes, 1) (or dim 0 on rank 1)"),
    "vsplit": ("view", "x.split(sizes, 0)"),
    "dsplit": ("view", "x.split(sizes, 2)"),
    "adjoint": ("view", "jnp.conj(jnp.asarray(x.mT))"),
    "mH": ("view", "jnp.conj(jnp.asarray(x.mT))"),
    "H": ("view", "jnp.conj(jnp.asarray(x.T))"),
    "real": ("view", "jnp.real(" + _A + ")"),
    "imag": ("view", "jnp.imag(" + _A + ")"),
    "ndimension": ("view", "x.dim()"),
    "nelement": ("view", "x.numel()"),
    "is_same_size": ("view", "x.shape == other.shape"),
    "is_set_to": ("view", "fs.shares_storage(x, other) and x.layout == other.layout"),
    "dim_order": ("view", "sorted(range(x.ndim), key=lambda d: -x.stride(d))"),
    **{n: ("view", f"x = x.{n[:-1]}(...) (a view op returns a new view)")
       for n in "as_strided_ squeeze_ unsqueeze_ t_ transpose_".split()},
    "swapaxes_": ("view", "x = x.transpose(dim0, dim1) (a view op returns a new view)"),
    "swapdims_": ("view", "x = x.transpose(dim0, dim1) (a view op returns a new view)"),
    # -- metadata that is not the view's -------------------------------------------------------
    "device": ("meta", "x.storage.device"),
    "get_device": ("meta", "x.storage.devices()"),
    **_group("meta", "x.storage.devices() (JAX places arrays with jax.device_put)", """
        is_cpu is_cuda is_ipu is_maia is_meta is_mkldnn is_mps is_mtia is_vulkan is_xla is_xpu
    """),
    "element_size": ("meta", "x.dtype.itemsize"),
    "is_complex": ("meta", "jnp.issubdtype(x.dtype, jnp.complexfloating)"),
    "is_floating_point": ("meta", "jnp.issubdtype(x.dtype, jnp.floating)"),
    "is_signed": ("meta", "jnp.issubdtype(x.dtype, jnp.signedinteger)"),
    "is_nonzero": ("meta", "bool(x)"),
    **_group("meta", "x.storage (a 1-D jax.Array) and x.storage_offset(); JAX exposes no pointers",
             "data_ptr const_data_ptr untyped_storage storage_type"),
    **_group("meta", "x.dtype; JAX arrays carry no lazy conjugate or negative bit "
             "(conjugate with jnp.conj(" + _A + "))", "is_conj is_neg resolve_conj resolve_neg"),
    # -- PyTorch-only machinery ----------------------------------------------------------------
    **_group("none", "use jax.experimental.sparse (e.g. BCOO.fromdense(" + _A + ")) for sparse arrays", """
        ccol_indices coalesce col_indices crow_indices dense_dim indices is_coalesced is_sparse
        is_sparse_csr row_indices smm sparse_dim sparse_mask sspaddmm to_dense to_mkldnn to_padded_tensor
        to_sparse to_sparse_bsc to_sparse_bsr to_sparse_coo to_sparse_csc to_sparse_csr values is_nested
        resize_as_sparse_ sparse_resize_ sparse_resize_and_clear_
    """),
    **_group("none", "JAX has no quantized arrays: keep " + _A + " with its scale and zero point", """
        dequantize int_repr is_quantized q_per_channel_axis q_per_channel_scales q_per_channel_zero_points
        q_scale q_zero_point qscheme
    """),
    **_group("none", "JAX manages device memory itself (no pinning, sharing or streams)",
             "is_pinned is_shared share_memory_ record_stream is_distributed"),
    **_group("none", "a StridedArray is a JAX pytree; use jax.tree_util to transform it",
             "as_subclass module_load"),
    "name": ("none", "JAX arrays have no names"),
    "hash_tensor": ("none", "hash(np.asarray(x).tobytes()) hashes the values"),
    "resize_": ("none", "StridedArray(new_storage, Layout(shape, strides)) for another shape"),
    "resize_as_": ("none", "StridedArray(new_storage, other.layout) for another shape"),
    "set_": ("none", "x.with_storage(storage), or StridedArray(storage, layout)"),
}

# -- in-place methods: the functional write through the view ----------------------------------------
_AT_WRITES = {
    "add_": "x.at[idx].add(other)",
    "sub_": "x.at[idx].add(-other)",
    "subtract_": "x.at[idx].add(-other)",
    "mul_": "x.at[idx].multiply(other)",
    "multiply_": "x.at[idx].multiply(other)",
    "div_": "x.at[idx].multiply(1 / other)",
    "divide_": "x.at[idx].multiply(1 / other)",
    "true_divide_": "x.at[idx].multiply(1 / other)",
    "clamp_min_": "x.at[idx].max(min)",
    "clamp_max_": "x.at[idx].min(max)",
    "copy_": "x.at[idx].set(src)",
    "fill_": "x.at[idx].set(value)",
    "zero_": "x.at[idx].set(0)",
    "index_put_": "x.at[idx].set(values) (accumulate=True: x.at[idx].add(values))",
    "index_add_": "x.at[idx].add(source)",
    "index_copy_": "x.at[idx].set(source)",
    "index_fill_": "x.at[idx].set(value)",
    "index_reduce_": "x.at[idx].multiply/min/max(source)",
    "scatter_": "x.at[idx].set(src)",
    "scatter_add_": "x.at[idx].add(src)",
    "scatter_reduce_": "x.at[idx].add/multiply/min/max(src)",
    "put_": "x.at[idx].set(source) (accumulate=True: x.at[idx].add(source))",
    "masked_fill_": "x.at[...].set(jnp.where(mask, value, " + _A + "))",
    "masked_scatter_": "x.at[...].set(" + _A + ".at[mask].set(source[:n]))",
    "fill_diagonal_": "x.diagonal().at[...].set(value)",
}
_RANDOM = {"bernoulli_": "bernoulli(key, p, x.shape)", "cauchy_": "cauchy(key, x.shape)",
           "exponential_": "exponential(key, x.shape)", "geometric_": "geometric(key, p, x.shape)",
           "log_normal_": "lognormal(key, sigma, x.shape)", "normal_": "normal(key, x.shape)",
           "random_": "randint(key, x.shape, low, high)", "uniform_": "uniform(key, x.shape)"}
TABLE.update({n: ("write", h) for n, h in _AT_WRITES.items()})
TABLE.update({n: ("write", f"x.at[...].set(jax.random.{h})") for n, h in _RANDOM.items()})
# every other in-place math method: compute out of place, then write through the view
TABLE.update({n: ("write", f"x.at[...].set({TABLE[n[:-1]][1].split(', or ')[-1]})")
              for n in """
    abs_ absolute_ acos_ acosh_ addbmm_ addcdiv_ addcmul_ addmm_ addmv_ addr_ arccos_ arccosh_ arcsin_
    arcsinh_ arctan2_ arctan_ arctanh_ asin_ asinh_ atan2_ atan_ atanh_ baddbmm_ bitwise_and_
    bitwise_left_shift_ bitwise_not_ bitwise_or_ bitwise_right_shift_ bitwise_xor_ ceil_ clamp_ clip_
    conj_physical_ copysign_ cos_ cosh_ cumprod_ cumsum_ deg2rad_ digamma_ eq_ erf_ erfc_ erfinv_ exp2_
    exp_ expm1_ fix_ float_power_ floor_ floor_divide_ fmod_ frac_ gcd_ ge_ greater_ greater_equal_ gt_
    heaviside_ hypot_ i0_ igamma_ igammac_ lcm_ ldexp_ le_ lerp_ less_ less_equal_ lgamma_ log10_ log1p_
    log2_ log_ logical_and_ logical_not_ logical_or_ logical_xor_ logit_ lt_ mvlgamma_ nan_to_num_ ne_
    neg_ negative_ nextafter_ not_equal_ polygamma_ pow_ rad2deg_ reciprocal_ relu_ remainder_ renorm_
    round_ rsqrt_ sgn_ sigmoid_ sign_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ tril_ triu_ trunc_ xlogy_
""".split()})
# the in-place methods a StridedArray over a jax.Ref has (functional_strides._src.array.refs)
TABLE.update({n: ("write", f"{TABLE[n][1]}, or in place through a view of a jax.Ref: "
                           f"fs.from_ref(jax.new_ref(storage)) takes {n}(...)")
              for n in "copy_ fill_ zero_ add_ sub_ mul_ div_ clamp_".split()})


def message(name: str) -> str | None:
    """The ``AttributeError`` message for the ``torch.Tensor`` name ``name``, or ``None``
    when ``name`` is not in :data:`TABLE`.

    Example:
      >>> print(message("sum"))
      StridedArray has no method 'sum' (torch.Tensor.sum is not a view op).
      Materialise and use jnp: jnp.asarray(x).sum(axis=...)
      >>> message("no_such_name") is None
      True
    """
    entry = TABLE.get(name)
    if entry is None:
        return None
    category, hint = entry
    reason, lead = REASONS[category]
    kind = "attribute" if name in PROPERTIES else "method"
    return f"StridedArray has no {kind} {name!r} (torch.Tensor.{name} {reason}). {lead}: {hint}"
