"""Vendor region text -> canonical region, via the reviewed table spiders/parsing/regions.csv."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spiders.parsing.regions as regions_mod
from spiders.parsing.regions import (
    NO_LOCATION,
    TIER1_CITIES,
    Region,
    RegionParseError,
    province_aliases,
    region_key,
    resolve_region,
)

R = Region
CSV_PATH = Path(regions_mod.__file__).with_name("regions.csv")

# text, vendor -> Region(region_code, country, province_or_state, city, is_tier1_city)
CASES = [
    # Azure
    ("eastus", "azure", R("eastus", "US", "Virginia", None, False)),
    ("eastus2", "azure", R("eastus2", "US", "Virginia", None, False)),
    ("westus", "azure", R("westus", "US", "California", None, False)),
    ("westus2", "azure", R("westus2", "US", "Washington", None, False)),
    ("westus3", "azure", R("westus3", "US", "Arizona", "Phoenix", False)),
    ("southcentralus", "azure", R("southcentralus", "US", "Texas", "San Antonio", False)),
    ("northcentralus", "azure", R("northcentralus", "US", "Illinois", "Chicago", False)),
    ("centralus", "azure", R("centralus", "US", "Iowa", "Des Moines", False)),
    ("westeurope", "azure", R("westeurope", "NL", "North Holland", "Amsterdam", False)),
    ("northeurope", "azure", R("northeurope", "IE", None, "Dublin", False)),
    ("uksouth", "azure", R("uksouth", "GB", "England", "London", False)),
    ("swedencentral", "azure", R("swedencentral", "SE", "Gävleborg", "Gävle", False)),
    ("francecentral", "azure", R("francecentral", "FR", "Île-de-France", "Paris", False)),
    ("germanywestcentral", "azure", R("germanywestcentral", "DE", "Hesse", "Frankfurt", False)),
    ("japaneast", "azure", R("japaneast", "JP", "Tokyo", "Tokyo", False)),
    ("koreacentral", "azure", R("koreacentral", "KR", "Seoul", "Seoul", False)),
    ("southeastasia", "azure", R("southeastasia", "SG", None, "Singapore", False)),
    ("eastasia", "azure", R("eastasia", "HK", "Hong Kong", "Hong Kong", False)),
    ("australiaeast", "azure", R("australiaeast", "AU", "New South Wales", "Sydney", False)),
    ("canadacentral", "azure", R("canadacentral", "CA", "Ontario", "Toronto", False)),
    ("centralindia", "azure", R("centralindia", "IN", "Maharashtra", "Pune", False)),
    ("southindia", "azure", R("southindia", "IN", "Tamil Nadu", "Chennai", False)),
    ("brazilsouth", "azure", R("brazilsouth", "BR", "São Paulo", "São Paulo", False)),
    ("East US", "azure", R("eastus", "US", "Virginia", None, False)),
    ("  EastUS ", "azure", R("eastus", "US", "Virginia", None, False)),
    ("West Europe", None, R("westeurope", "NL", "North Holland", "Amsterdam", False)),
    # AWS
    ("us-east-1", "aws", R("us-east-1", "US", "Virginia", "Ashburn", False)),
    ("us-east-2", "aws", R("us-east-2", "US", "Ohio", "Columbus", False)),
    ("us-west-2", "aws", R("us-west-2", "US", "Oregon", None, False)),
    ("eu-west-1", "aws", R("eu-west-1", "IE", None, "Dublin", False)),
    ("eu-west-2", "aws", R("eu-west-2", "GB", "England", "London", False)),
    ("eu-central-1", "aws", R("eu-central-1", "DE", "Hesse", "Frankfurt", False)),
    ("eu-north-1", "aws", R("eu-north-1", "SE", "Stockholm", "Stockholm", False)),
    ("ap-northeast-1", "aws", R("ap-northeast-1", "JP", "Tokyo", "Tokyo", False)),
    ("ap-northeast-2", "aws", R("ap-northeast-2", "KR", "Seoul", "Seoul", False)),
    ("ap-southeast-1", "aws", R("ap-southeast-1", "SG", None, "Singapore", False)),
    ("ap-southeast-2", "aws", R("ap-southeast-2", "AU", "New South Wales", "Sydney", False)),
    ("ap-south-1", "aws", R("ap-south-1", "IN", "Maharashtra", "Mumbai", False)),
    ("ca-central-1", "aws", R("ca-central-1", "CA", "Quebec", "Montreal", False)),
    ("sa-east-1", "aws", R("sa-east-1", "BR", "São Paulo", "São Paulo", False)),
    ("US East (N. Virginia)", "aws",
     R("us-east-1", "US", "Virginia", "Ashburn", False)),
    ("us-east-1a", "aws", R("us-east-1a", "US", "Virginia", "Ashburn", False)),   # an AZ
    # GCP
    ("us-central1", "gcp", R("us-central1", "US", "Iowa", "Council Bluffs", False)),
    ("us-east4", "gcp", R("us-east4", "US", "Virginia", "Ashburn", False)),
    ("us-west1", "gcp", R("us-west1", "US", "Oregon", "The Dalles", False)),
    ("europe-west4", "gcp", R("europe-west4", "NL", "Groningen", "Eemshaven", False)),
    ("asia-northeast1", "gcp", R("asia-northeast1", "JP", "Tokyo", "Tokyo", False)),
    ("asia-southeast1", "gcp", R("asia-southeast1", "SG", None, "Singapore", False)),
    ("me-west1", "gcp", R("me-west1", "IL", None, "Tel Aviv", False)),
    ("us-central1-a", "gcp", R("us-central1-a", "US", "Iowa", "Council Bluffs", False)),
    # Alibaba
    ("cn-beijing", "alibaba_cn", R("cn-beijing", "CN", "Beijing", "Beijing", True)),
    ("cn-shanghai", "alibaba_cn", R("cn-shanghai", "CN", "Shanghai", "Shanghai", True)),
    ("cn-hangzhou", "alibaba_cn", R("cn-hangzhou", "CN", "Zhejiang", "Hangzhou", False)),
    ("cn-shenzhen", "alibaba_cn", R("cn-shenzhen", "CN", "Guangdong", "Shenzhen", True)),
    ("cn-zhangjiakou", "alibaba_cn", R("cn-zhangjiakou", "CN", "Hebei", "Zhangjiakou", False)),
    ("cn-wulanchabu", "alibaba_cn", R("cn-wulanchabu", "CN", "Inner Mongolia", "Ulanqab", False)),
    ("cn-huhehaote", "alibaba_cn", R("cn-huhehaote", "CN", "Inner Mongolia", "Hohhot", False)),
    ("cn-chengdu", "alibaba_cn", R("cn-chengdu", "CN", "Sichuan", "Chengdu", False)),
    ("cn-guangzhou", "alibaba_cn", R("cn-guangzhou", "CN", "Guangdong", "Guangzhou", True)),
    ("cn-qingdao", "alibaba_cn", R("cn-qingdao", "CN", "Shandong", "Qingdao", False)),
    ("cn-hongkong", "alibaba_cn", R("cn-hongkong", "HK", "Hong Kong", "Hong Kong", False)),
    ("华北2（北京）", "alibaba_cn", R("cn-beijing", "CN", "Beijing", "Beijing", True)),
    ("cn-beijing", None, R("cn-beijing", "CN", "Beijing", "Beijing", True)),
    ("cn-beijing-h", "alibaba_cn", R("cn-beijing-h", "CN", "Beijing", "Beijing", True)),
    # Tencent
    ("ap-beijing", "tencent_cn", R("ap-beijing", "CN", "Beijing", "Beijing", True)),
    ("ap-shanghai", "tencent_cn", R("ap-shanghai", "CN", "Shanghai", "Shanghai", True)),
    ("ap-guangzhou", "tencent_cn", R("ap-guangzhou", "CN", "Guangdong", "Guangzhou", True)),
    ("ap-nanjing", "tencent_cn", R("ap-nanjing", "CN", "Jiangsu", "Nanjing", False)),
    ("ap-chengdu", "tencent_cn", R("ap-chengdu", "CN", "Sichuan", "Chengdu", False)),
    ("ap-chongqing", "tencent_cn", R("ap-chongqing", "CN", "Chongqing", "Chongqing", False)),
    ("ap-hongkong", "tencent_cn", R("ap-hongkong", "HK", "Hong Kong", "Hong Kong", False)),
    ("ap-singapore", "tencent_cn", R("ap-singapore", "SG", None, "Singapore", False)),
    ("ap-guangzhou-3", "tencent_cn", R("ap-guangzhou-3", "CN", "Guangdong", "Guangzhou", True)),
    # Huawei (its ap-southeast-1 is Hong Kong, not Singapore)
    ("cn-north-4", "huaweicloud_cn", R("cn-north-4", "CN", "Beijing", "Beijing", True)),
    ("cn-east-3", "huaweicloud_cn", R("cn-east-3", "CN", "Shanghai", "Shanghai", True)),
    ("cn-south-1", "huaweicloud_cn", R("cn-south-1", "CN", "Guangdong", "Guangzhou", True)),
    ("cn-southwest-2", "huaweicloud_cn", R("cn-southwest-2", "CN", "Guizhou", "Guiyang", False)),
    ("ap-southeast-1", "huaweicloud_cn",
     R("ap-southeast-1", "HK", "Hong Kong", "Hong Kong", False)),
    ("华北-北京四", "huaweicloud_cn", R("cn-north-4", "CN", "Beijing", "Beijing", True)),
    # AutoDL-style zones
    ("北京A区", "autodl_cn", R("北京A区", "CN", "Beijing", "Beijing", True)),
    ("北京B区", "autodl_cn", R("北京B区", "CN", "Beijing", "Beijing", True)),
    ("内蒙B区", "autodl_cn", R("内蒙B区", "CN", "Inner Mongolia", None, False)),
    ("西北B区", "autodl_cn", R("西北B区", "CN", "Ningxia", "Zhongwei", False)),
    ("西北B区", None, R("西北B区", "CN", "Ningxia", "Zhongwei", False)),
    ("west-B", "autodl_cn", R("西北B区", "CN", "Ningxia", "Zhongwei", False)),
    ("neimeng-B", "autodl_cn", R("内蒙B区", "CN", "Inner Mongolia", None, False)),
    ("beijing-A", "autodl_cn", R("北京A区", "CN", "Beijing", "Beijing", True)),
    ("西北企业区", "autodl_cn", R("西北企业区", "CN", "Ningxia", None, False)),
    ("重庆A区", "autodl_cn", R("重庆A区", "CN", "Chongqing", "Chongqing", False)),
    ("芜湖A区", "autodl_cn", R("芜湖A区", "CN", "Anhui", "Wuhu", False)),
    ("芜湖B区", "autodl_cn", R("芜湖B区", "CN", "Anhui", "Wuhu", False)),
    ("佛山区", "autodl_cn", R("佛山区", "CN", "Guangdong", "Foshan", False)),
    ("南京A区", "autodl_cn", R("南京A区", "CN", "Jiangsu", "Nanjing", False)),
    ("北京C区", "autodl_cn", R("北京C区", "CN", "Beijing", "Beijing", True)),   # zone of a place
    ("杭州B区", "some idc", R("杭州B区", "CN", "Zhejiang", "Hangzhou", False)),
    ("宿迁", None, R("宿迁", "CN", "Jiangsu", "Suqian", False)),
    ("杭州", None, R("杭州", "CN", "Zhejiang", "Hangzhou", False)),
    ("贵安", None, R("贵安", "CN", "Guizhou", "Gui'an", False)),
    ("贵阳", None, R("贵阳", "CN", "Guizhou", "Guiyang", False)),
    ("乌兰察布", "光环新网 Sinnet", R("乌兰察布", "CN", "Inner Mongolia", "Ulanqab", False)),
    ("呼和浩特", None, R("呼和浩特", "CN", "Inner Mongolia", "Hohhot", False)),
    ("庆阳", None, R("庆阳", "CN", "Gansu", "Qingyang", False)),
    ("中卫", None, R("中卫", "CN", "Ningxia", "Zhongwei", False)),
    # Chinese provinces and cities, in both languages
    ("北京", None, R("北京", "CN", "Beijing", "Beijing", True)),
    ("Beijing", None, R("beijing", "CN", "Beijing", "Beijing", True)),
    ("北京市", None, R("北京", "CN", "Beijing", "Beijing", True)),
    ("上海", None, R("上海", "CN", "Shanghai", "Shanghai", True)),
    ("广州", None, R("广州", "CN", "Guangdong", "Guangzhou", True)),
    ("深圳", None, R("深圳", "CN", "Guangdong", "Shenzhen", True)),
    ("Shenzhen", None, R("shenzhen", "CN", "Guangdong", "Shenzhen", True)),
    ("江苏", None, R("江苏", "CN", "Jiangsu", None, False)),
    ("江苏省", None, R("江苏", "CN", "Jiangsu", None, False)),
    ("Jiangsu", None, R("jiangsu", "CN", "Jiangsu", None, False)),
    ("南京", None, R("南京", "CN", "Jiangsu", "Nanjing", False)),
    ("苏州", None, R("苏州", "CN", "Jiangsu", "Suzhou", False)),
    ("内蒙古", None, R("内蒙古", "CN", "Inner Mongolia", None, False)),
    ("内蒙古自治区", None, R("内蒙古", "CN", "Inner Mongolia", None, False)),
    ("Inner Mongolia", None, R("inner mongolia", "CN", "Inner Mongolia", None, False)),
    ("贵州", None, R("贵州", "CN", "Guizhou", None, False)),
    ("浙江", None, R("浙江", "CN", "Zhejiang", None, False)),
    ("四川", None, R("四川", "CN", "Sichuan", None, False)),
    ("成都", None, R("成都", "CN", "Sichuan", "Chengdu", False)),
    ("重庆", None, R("重庆", "CN", "Chongqing", "Chongqing", False)),
    ("宁夏", None, R("宁夏", "CN", "Ningxia", None, False)),
    ("甘肃", None, R("甘肃", "CN", "Gansu", None, False)),
    ("河北", None, R("河北", "CN", "Hebei", None, False)),
    ("张家口", None, R("张家口", "CN", "Hebei", "Zhangjiakou", False)),
    ("安徽", None, R("安徽", "CN", "Anhui", None, False)),
    ("湖北", None, R("湖北", "CN", "Hubei", None, False)),
    ("武汉", None, R("武汉", "CN", "Hubei", "Wuhan", False)),
    ("广东", None, R("广东", "CN", "Guangdong", None, False)),
    ("山东", None, R("山东", "CN", "Shandong", None, False)),
    ("福建", None, R("福建", "CN", "Fujian", None, False)),
    ("香港", None, R("香港", "HK", "Hong Kong", "Hong Kong", False)),
    # RunPod data-centre ids
    ("US-TX-3", "runpod", R("us-tx-3", "US", "Texas", None, False)),
    ("US-GA-1", "runpod", R("us-ga-1", "US", "Georgia", None, False)),
    ("EU-RO-1", "runpod", R("eu-ro-1", "RO", None, None, False)),
    ("EU-SE-1", "runpod", R("eu-se-1", "SE", None, None, False)),
    ("CA-MTL-1", "runpod", R("ca-mtl-1", "CA", "Quebec", "Montreal", False)),
    ("AP-JP-1", "runpod", R("ap-jp-1", "JP", None, None, False)),
    ("EU-NL-1", "runpod", R("eu-nl-1", "NL", None, None, False)),
    ("US-CA-2", "runpod", R("us-ca-2", "US", "California", None, False)),
    ("EU-PL-9", "runpod", R("eu-pl-9", "PL", None, None, False)),    # unlisted id: country only
    ("US-ZZ-9", "runpod", R("us-zz-9", "US", None, None, False)),
    # vast.ai "State or City, CC" geolocations and plain country codes
    ("Texas, US", "vastai", R("texas, us", "US", "Texas", None, False)),
    ("texas, us", "vastai", R("texas, us", "US", "Texas", None, False)),
    ("Washington, US", "vastai", R("washington, us", "US", "Washington", None, False)),
    ("Georgia, US", "vastai", R("georgia, us", "US", "Georgia", None, False)),
    ("Georgia, GE", "vastai", R("georgia, ge", "GE", None, None, False)),   # the country
    ("British Columbia, CA", "vastai", R("british columbia, ca", "CA", "British Columbia", None,
                                         False)),
    ("Bavaria, DE", "vastai", R("bavaria, de", "DE", "Bavaria", None, False)),
    ("New South Wales, AU", "vastai", R("new south wales, au", "AU", "New South Wales", None,
                                        False)),
    ("United States, US", "vastai", R("united states, us", "US", None, None, False)),
    ("Taiwan, TW", "vastai", R("taiwan, tw", "TW", None, None, False)),
    ("Texas, US", "azure", R("texas, us", "US", "Texas", None, False)),   # any vendor: a state
    ("Hong Kong, HK", "vast.ai", R("hong kong, hk", "HK", "Hong Kong", "Hong Kong", False)),
    (", US", "vastai", R("us", "US", None, None, False)),
    ("Quebec, CA", "vastai", R("quebec, ca", "CA", "Quebec", None, False)),
    ("Beijing, CN", "vastai", R("beijing, cn", "CN", "Beijing", "Beijing", True)),
    ("Beijing, US", "vastai", R("beijing, us", "US", None, None, False)),   # country wins
    ("US", None, R("us", "US", None, None, False)),
    ("se", "vastai", R("se", "SE", None, None, False)),
    # Vultr
    ("ewr", "vultr", R("ewr", "US", "New Jersey", "Piscataway", False)),
    ("ord", "vultr", R("ord", "US", "Illinois", "Chicago", False)),
    ("lax", "vultr", R("lax", "US", "California", "Los Angeles", False)),
    ("sea", "vultr", R("sea", "US", "Washington", "Seattle", False)),
    ("sjc", "vultr", R("sjc", "US", "California", "San Jose", False)),
    ("atl", "vultr", R("atl", "US", "Georgia", "Atlanta", False)),
    ("dfw", "vultr", R("dfw", "US", "Texas", "Dallas", False)),
    ("mia", "vultr", R("mia", "US", "Florida", "Miami", False)),
    ("fra", "vultr", R("fra", "DE", "Hesse", "Frankfurt", False)),
    ("ams", "vultr", R("ams", "NL", "North Holland", "Amsterdam", False)),
    ("lhr", "vultr", R("lhr", "GB", "England", "London", False)),
    ("cdg", "vultr", R("cdg", "FR", "Île-de-France", "Paris", False)),
    ("nrt", "vultr", R("nrt", "JP", "Tokyo", "Tokyo", False)),
    ("icn", "vultr", R("icn", "KR", "Seoul", "Seoul", False)),
    ("sgp", "vultr", R("sgp", "SG", None, "Singapore", False)),
    ("syd", "vultr", R("syd", "AU", "New South Wales", "Sydney", False)),
    ("bom", "vultr", R("bom", "IN", "Maharashtra", "Mumbai", False)),
    ("del", "vultr", R("del", "IN", "Delhi", "Delhi", False)),
    ("blr", "vultr", R("blr", "IN", "Karnataka", "Bangalore", False)),
    ("EWR", None, R("ewr", "US", "New Jersey", "Piscataway", False)),
    # a country by its ISO 3166 name, short, common or official (the price archives' "Italy")
    ("Italy", "cloud-gpus:seeweb", R("italy", "IT", None, None, False)),
    ("South Korea", None, R("south korea", "KR", None, None, False)),
    ("Korea, Republic of", None, R("korea, republic of", "KR", None, None, False)),
    ("Türkiye", None, R("türkiye", "TR", None, None, False)),
    ("Viet Nam", None, R("viet nam", "VN", None, None, False)),
    # a place and its country are one place; an unknown city keeps its country ("Somewhere, US")
    ("Frankfurt, Germany", None, R("frankfurt, germany", "DE", "Hesse", "Frankfurt", False)),
    ("Helsinki, Finland", None, R("helsinki, finland", "FI", None, None, False)),
    ("Iceland / Iceland", None, R("iceland / iceland", "IS", None, None, False)),
]


@pytest.mark.parametrize(("text", "vendor", "expected"), CASES)
def test_resolve_region(text, vendor, expected):
    assert resolve_region(text, vendor) == expected


@pytest.mark.parametrize(("text", "vendor", "message"), [
    ("Mars", None, "unknown region 'Mars' for vendor None"),
    ("Atlantis-1", "azure", "unknown region 'Atlantis-1' for vendor 'azure'"),
    ("", "aws", "unknown region '' for vendor 'aws'"),
    ("   ", None, "unknown region"),
    ("ewr", "lambda", "vendor 'lambda'"),      # another vendor's code is not borrowed
    ("eastus", "aws", "vendor 'aws'"),
    ("NA", None, "unknown region 'NA'"),       # "not available", not Namibia
    ("Somewhere, ZZ", "vastai", "unknown region"),
    ("ap-southeast-1", None, "pass vendor="),  # AWS/Alibaba Singapore vs Huawei Hong Kong
    ("海淀区", None, "unknown region"),
    (NO_LOCATION, "vastai", "no location given by the vendor (vendor 'vastai')"),
    (NO_LOCATION.upper(), None, "the offer cannot be placed"),
    # several countries or areas: an offer is placed in one country, and the listing does not say
    # which (the price archives' lists of regions)
    ("Finland, Iceland", "cloud-gpus:datacrunchio",
     "names several places (Finland, Iceland) for vendor 'cloud-gpus:datacrunchio'"),
    ("US/Europe", None, "names several places (US, Europe)"),
    ("Europe/North America", None, "names several places"),
    ("Switzerland, Germany, Austria, Bulgaria, Croatia", None, "does not say which"),
    ("Norway and Sweden", None, "names several places (Norway, Sweden)"),
    ("北京, 上海", None, "names several places"),             # one country, two cities
    ("us-east-1, us-west-2", "aws", "names several places"),   # one country, two states
    ("Europe", "cloud-gpus:scaleway", "'Europe' is an area, not a country"),
    ("North America", None, "is an area, not a country"),
    ("Atlantis, Mars", None, "unknown region 'Atlantis, Mars'"),
    ("ITA", None, "unknown region 'ITA'"),   # a three-letter code is not a name (FRA: Frankfurt)
])
def test_unknown_region_raises_naming_vendor_and_text(text, vendor, message):
    with pytest.raises(RegionParseError) as err:
        resolve_region(text, vendor)
    assert message in str(err.value)


def test_vendor_rows_win_over_generic_rows():
    assert resolve_region("ap-southeast-1", "huaweicloud_cn").country == "HK"
    assert resolve_region("ap-southeast-1", "aws").country == "SG"
    assert resolve_region("中国香港", "alibaba_cn").region_code == "cn-hongkong"
    assert resolve_region("中国香港", None).region_code == "香港"


@pytest.mark.parametrize(("given", "key"), [
    ("azure", "azure"), (" AWS ", "aws"), ("autodl_cn", "autodl_cn"), ("tencent_cn", "tencent_cn"),
    (None, None), ("", None), ("  ", None)])
def test_region_key_is_the_key_as_given(given, key):
    assert region_key(given) == key


@pytest.mark.parametrize(("text", "key", "display_name"), [
    ("ap-southeast-1", "huaweicloud_cn", "华为云 Huawei Cloud"),
    ("ap-southeast-1", "huaweicloud_cn", "huawei"),       # the key the substring table guessed
    ("cn-hongkong", "alibaba_cn", "阿里云 Alibaba Cloud"),
    ("华北-北京四", "huaweicloud_cn", "Huawei"),
])
def test_a_display_name_is_not_a_region_key(text, key, display_name):
    # a key is a source's (its spider's region_key), never guessed from a vendor's name: a name
    # reads the rows every vendor shares, not the vendor's own
    own = resolve_region(text, key)
    try:
        guessed = resolve_region(text, display_name)
    except RegionParseError:
        guessed = None
    assert guessed != own


@pytest.mark.parametrize(("name", "province"), [
    ("北京", "Beijing"), ("Beijing", "Beijing"), ("江苏", "Jiangsu"), ("Jiangsu", "Jiangsu"),
    ("内蒙古", "Inner Mongolia"), ("内蒙", "Inner Mongolia"), ("Inner Mongolia", "Inner Mongolia"),
    ("贵州", "Guizhou"), ("Guizhou", "Guizhou"), ("上海", "Shanghai"), ("广东", "Guangdong"),
    ("重庆", "Chongqing"), ("宁夏", "Ningxia"), ("香港", "Hong Kong")])
def test_province_aliases(name, province):
    assert province_aliases()[name] == province


def test_province_aliases_are_provinces_only():
    aliases = province_aliases()
    assert "广州" not in aliases and "南京" not in aliases and "中国" not in aliases
    assert "eastus" not in aliases
    # all 31 mainland provinces + Hong Kong + Macau, each in Chinese and English
    assert len(set(aliases.values())) == 33


def _csv_rows() -> list[dict[str, str]]:
    with CSV_PATH.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_csv_rows_are_consistent():
    rows = _csv_rows()
    assert len(rows) > 300
    for row in rows:
        assert row["region_code"] and row["alias"] and len(row["country"]) == 2
        tier1 = row["country"] == "CN" and row["city"] in TIER1_CITIES
        assert row["is_tier1_city"] == ("true" if tier1 else "false"), row


def test_every_csv_row_resolves_to_itself():
    for row in _csv_rows():
        got = resolve_region(row["alias"], row["vendor"] or None)
        assert (got.region_code, got.country, got.province_or_state or "", got.city or "") == (
            row["region_code"], row["country"], row["province_or_state"], row["city"]), row


VAST_STATES = [row for row in _csv_rows() if row["vendor"] == "vastai"]


@settings(max_examples=200)
@given(row=st.sampled_from(VAST_STATES), upper=st.booleans(),
       pad=st.sampled_from(["", " ", "  "]))
def test_vast_state_geolocation_gets_its_state_in_any_case_and_spacing(row, upper, pad):
    text = f"{pad}{row['alias']},{pad} {row['country']}{pad}"
    got = resolve_region(text.upper() if upper else text, "vastai")
    assert (got.country, got.province_or_state, got.city) == (
        row["country"], row["province_or_state"], None)


@given(row=st.sampled_from(VAST_STATES),
       other=st.sampled_from(["GB", "FR", "JP", "BR", "GE", "IN"]))
def test_vast_state_name_with_another_country_keeps_that_country_only(row, other):
    got = resolve_region(f"{row['alias']}, {other}", "vastai")
    assert (got.country, got.province_or_state) == (other, None)
