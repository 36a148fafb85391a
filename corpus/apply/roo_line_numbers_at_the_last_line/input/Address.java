                List<ContactInfoItemResp> addressInfoList = new ArrayList<>(CollectionUtils.size(repairInfoList) > 10 ? 10
                                : CollectionUtils.size(repairInfoList) + CollectionUtils.size(homeAddressInfoList)
                                                + CollectionUtils.size(idNoAddressInfoList) + CollectionUtils.size(workAddressInfoList)
                                                + CollectionUtils.size(personIdentityInfoList));