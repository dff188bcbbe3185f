"""The wordings `baselines.toolkit.constraints` reads as attribute constraints: one rule per constraint, with
the patterns that state it (price, rating and category wordings are built there, from
`trace_dataset.constants.PRICE_KEYWORDS` and the knowledge base's categories)."""

from __future__ import annotations

from typing import Any, NamedTuple


class Rule(NamedTuple):
    key: str
    kind: str
    field: str
    values: tuple[Any, ...]
    patterns: tuple[str, ...]  # regexes, matched case-insensitively as whole words
    negatable: bool = True  # False where the wording already is a negation ("too loud")


# Earlier rules win overlapping matches ("not too loud" is the quiet rule, "free wifi" the free-wifi rule).
RULES: tuple[Rule, ...] = tuple(
    Rule(*r)
    for r in (
        (
            "noise",
            "enum",
            "noise_level",
            ("quiet", "average"),
            (
                r"too (loud|noisy)",
                r"not (too |very |so )?(loud|noisy)",
                r"less (loud|noisy)",
                r"(loud|noisy)ness",
            ),
            False,
        ),
        (
            "noise",
            "enum",
            "noise_level",
            ("quiet", "average"),
            (r"quiet(er)?", r"calm", r"peaceful", r"tranquil", r"low[- ]key", r"hear (each other|ourselves)"),
        ),
        (
            "noise",
            "enum",
            "noise_level",
            ("loud", "very_loud"),
            (r"lively", r"buzzing", r"energetic", r"full of energy", r"vibrant", r"bustling", r"rowdy"),
        ),
        ("wifi", "enum", "wifi", ("free",), (r"free wi-?fi", r"free internet")),
        ("wifi", "enum", "wifi", ("free", "paid"), (r"wi-?fi", r"internet", r"wireless")),
        (
            "bool:outdoor_seating",
            "bool",
            "outdoor_seating",
            (True,),
            (
                r"outdoor( seating)?",
                r"patio",
                r"terrace",
                r"al ?fresco",
                r"sit outside",
                r"eat outside",
                r"outside seating",
                r"sidewalk seating",
                r"rooftop",
            ),
        ),
        (
            "bool:good_for_kids",
            "bool",
            "good_for_kids",
            (True,),
            (
                r"kids?",
                r"child(ren)?",
                r"toddlers?",
                r"little ones",
                r"famil(y|ies)",
                r"(family|kid|child)[- ]friendly",
            ),
        ),
        (
            "bool:dogs_allowed",
            "bool",
            "dogs_allowed",
            (True,),
            (r"dogs?", r"pets?", r"pet[- ]friendly", r"dog[- ]friendly", r"pupp(y|ies)"),
        ),
        (
            "parking",
            "any_list",
            "parking",
            (),
            (r"parking", r"place to park", r"park (the|my|our) car", r"leave the car", r"valet"),
        ),
        (
            "bool:wheelchair_accessible",
            "bool",
            "wheelchair_accessible",
            (True,),
            (
                r"wheelchairs?",
                r"wheelchair[- ]accessible",
                r"accessibility",
                r"accessible entrance",
                r"step[- ]free",
                r"mobility",
                r"ramps?",
            ),
        ),
        (
            "bool:good_for_groups",
            "bool",
            "good_for_groups",
            (True,),
            (
                r"groups?",
                r"(large|larger|big|bigger) party",
                r"whole team",
                r"party of (four|five|six|seven|eight|nine|ten|a dozen|[4-9]|\d\d)",
                r"(four|five|six|seven|eight|nine|ten|a dozen|[4-9]|\d\d) (of us|people|friends|guests)",
            ),
        ),
        (
            "bool:reservations",
            "bool",
            "reservations",
            (True,),
            (r"reservations?", r"reserve a table", r"book a table", r"book ahead", r"bookable( tables?)?"),
        ),
        (
            "bool:takeout",
            "bool",
            "takeout",
            (True,),
            (r"take[- ]?out", r"to-go", r"food to go", r"carry[- ]?out"),
        ),
        ("bool:delivery", "bool", "delivery", (True,), (r"delivery", r"deliver(s|ed)?")),
        ("bool:happy_hour", "bool", "happy_hour", (True,), (r"happy[- ]hour",)),
        (
            "bool:has_tv",
            "bool",
            "has_tv",
            (True,),
            (r"tvs?", r"televisions?", r"watch the game", r"sports bar"),
        ),
        ("bool:bike_parking", "bool", "bike_parking", (True,), (r"bikes?", r"bicycles?", r"cycling")),
        (
            "bool:accepts_credit_cards",
            "bool",
            "accepts_credit_cards",
            (True,),
            (r"credit cards?", r"pay by card"),
        ),
        (
            "alcohol",
            "enum",
            "alcohol",
            ("full_bar",),
            (
                r"cocktails?",
                r"(full|real|proper) bar",
                r"mixed drinks",
                r"spirits",
                r"whiske?y",
                r"bourbon",
                r"martinis?",
            ),
        ),
        (
            "alcohol",
            "enum",
            "alcohol",
            ("beer_and_wine", "full_bar"),
            (r"wines?", r"beers?", r"craft beer", r"brews?"),
        ),
        (
            "attire",
            "enum",
            "attire",
            ("dressy", "formal"),
            (r"dressy", r"formal", r"dress code", r"dress up"),
        ),
        (
            "ambience:romantic",
            "list",
            "ambience",
            ("romantic",),
            (r"romantic", r"date night", r"anniversary"),
        ),
        ("ambience:intimate", "list", "ambience", ("intimate",), (r"intimate",)),
        ("ambience:classy", "list", "ambience", ("classy",), (r"classy", r"elegant", r"sophisticated")),
        ("ambience:hipster", "list", "ambience", ("hipster",), (r"hipster", r"artsy", r"quirky", r"offbeat")),
        ("ambience:divey", "list", "ambience", ("divey",), (r"divey", r"dive bar", r"dive")),
        ("ambience:touristy", "list", "ambience", ("touristy",), (r"touristy",)),
        (
            "ambience:trendy",
            "list",
            "ambience",
            ("trendy",),
            (r"trendy", r"hip", r"stylish", r"instagrammable"),
        ),
        ("ambience:upscale", "list", "ambience", ("upscale",), (r"fancy", r"high[- ]end", r"polished")),
        (
            "ambience:casual",
            "list",
            "ambience",
            ("casual",),
            (r"casual", r"laid[- ]back", r"relaxed", r"no[- ]frills"),
        ),
        ("meal:breakfast", "list", "good_for_meal", ("breakfast",), (r"breakfast",)),
        ("meal:brunch", "list", "good_for_meal", ("brunch",), (r"brunch",)),
        ("meal:lunch", "list", "good_for_meal", ("lunch",), (r"lunch",)),
        ("meal:dinner", "list", "good_for_meal", ("dinner",), (r"dinner",)),
        ("meal:dessert", "list", "good_for_meal", ("dessert",), (r"desserts?", r"sweets")),
        (
            "meal:latenight",
            "list",
            "good_for_meal",
            ("latenight",),
            (r"late[- ]night", r"after midnight", r"open late"),
        ),
        ("dietary:vegan", "dietary", "dietary", ("vegan",), (r"vegan",)),
        (
            "dietary:vegetarian",
            "dietary",
            "dietary",
            ("vegetarian",),
            (r"vegetarian", r"meat[- ]free", r"plant[- ]based"),
        ),
        (
            "dietary:gluten-free",
            "dietary",
            "dietary",
            ("gluten-free",),
            (r"gluten[- ]free", r"celiac", r"coeliac"),
        ),
        ("dietary:halal", "dietary", "dietary", ("halal",), (r"halal",)),
        ("dietary:kosher", "dietary", "dietary", ("kosher",), (r"kosher",)),
        ("dietary:dairy-free", "dietary", "dietary", ("dairy-free",), (r"dairy[- ]free", r"lactose")),
        ("dietary:soy-free", "dietary", "dietary", ("soy-free",), (r"soy[- ]free",)),
    )
)
