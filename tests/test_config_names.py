"""Config names come from the kernel's own meta-parameters, whatever it calls them: the tile
sizes, then every other meta-parameter whose value differs within the config space, so no two
configs of a space share a name."""
from __future__ import annotations

from pathlib import Path

from irlab.kernels.spec import config_name
from irlab.kernels import get
from irlab.kernels.tile_configs import config_space

TUTORIAL = str(Path(__file__).parent / "kernels" / "tutorial_matmul.py")


def test_configs_are_named_from_the_kernels_own_meta_parameters():
    spec = get(TUTORIAL)    # BLOCK_SIZE_M/N/K and GROUP_SIZE_M, two configs differing only in GROUP_SIZE_M
    space = config_space(spec, (3,))
    names = [c.name for c in space]
    assert len(names) == len(set(names)) == 11
    # the tutorial's tiles in the kernel's own names, GROUP_SIZE_M spelled out because it differs
    assert space[0].name == "128x256x64-GROUP_SIZE_M8-w8-s3"
    assert dict(space[0].meta) == {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8}
    assert {"128x128x64-GROUP_SIZE_M8-w4-s3", "128x128x64-GROUP_SIZE_M4-w4-s3"} <= set(names)
    # a config with extra options keeps what tells it apart
    g4 = spec.config("128x128x64-GROUP_SIZE_M4-w4-s3")
    assert g4.meta["GROUP_SIZE_M"] == 4
    assert g4.with_options(maxnreg=128).name == "128x128x64-GROUP_SIZE_M4-w4-s3-maxnreg128"
    # --configs picks a tile by that name at every depth asked for
    assert [c.name for c in config_space(spec, (2, 3), ["128x128x64-GROUP_SIZE_M4-w4"])] == \
        ["128x128x64-GROUP_SIZE_M4-w4-s2", "128x128x64-GROUP_SIZE_M4-w4-s3"]
    # other spellings of the tile sizes
    for keys in (("BM", "BN", "BK"), ("TILE_M", "TILE_N", "TILE_K"), ("BLOCK_M", "BLOCK_N", "BLOCK_K")):
        assert config_name(dict(zip(keys, (64, 32, 16))), 4, 2) == "64x32x16-w4-s2"
    # split-K: the tutorial's tiles take the kernel's own SPLIT_K, spelled out where it differs
    split = [c.name for c in config_space(get("gemm_splitk"), (2,))]
    assert len(split) == len(set(split)) and "64x64x64-SPLIT_K8-w4-s2" in split and \
        "128x128x32-SPLIT_K4-w4-s2" in split


def test_a_config_s_name_does_not_depend_on_the_order_its_options_were_given_in():
    """Two configs with the same options given in another order are one config, one name (a name
    is a cache and results key: ``--resume`` and ``--configs`` find a config by it)."""
    a = config_name({"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 16}, 4, 2, {"maxnreg": 128, "num_ctas": 2})
    b = config_name({"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 16}, 4, 2, {"num_ctas": 2, "maxnreg": 128})
    assert a == b == "64x32x16-w4-s2-maxnreg128-num_ctas2"
