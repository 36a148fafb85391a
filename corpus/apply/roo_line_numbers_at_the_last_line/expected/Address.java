                
                // Filter addresses if optimization is enabled
                if (isAddressDisplayOptimizeEnabled()) {
                    homeAddressInfoList = filterAddressesByThreeYearRule(homeAddressInfoList);
                    personIdentityInfoList = filterAddressesByThreeYearRule(personIdentityInfoList);
                    idNoAddressInfoList = filterAddressesByThreeYearRule(idNoAddressInfoList);
                    workAddressInfoList = filterAddressesByThreeYearRule(workAddressInfoList);
                }
                
                List<ContactInfoItemResp> addressInfoList = new ArrayList<>(CollectionUtils.size(repairInfoList) > 10 ? 10
                                : CollectionUtils.size(repairInfoList) + CollectionUtils.size(homeAddressInfoList)
                                                + CollectionUtils.size(idNoAddressInfoList) + CollectionUtils.size(workAddressInfoList)
                                                + CollectionUtils.size(personIdentityInfoList));