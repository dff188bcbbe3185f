"""A small generated knowledge base (random POIs and review sentences, seeded), written through the one test KB
writer (tests/support/kb.py), so the generator can be exercised without the Yelp reader or the KB builder."""

from __future__ import annotations

import random
from pathlib import Path

from tests.support.kb import FROM_FILES, write_kb
from trace_dataset.constants import BOOL_ATTRIBUTES, CITY_LANDMARKS, REVIEW_MAX_CHARS

SUBCATS = {
    "restaurant": ("Italian", "Mexican", "Thai", "Seafood", "Pizza", "Southern", "Vegan"),
    "hotel": ("Bed & Breakfast", "Resorts", "Hostels", "Boutique Hotels"),
    "attraction": ("Museums", "Parks", "Art Galleries", "Zoos", "Music Venues"),
}
NAME_A = (
    "Copper",
    "Blue",
    "Golden",
    "Old Mill",
    "Riverside",
    "Maple",
    "Iron",
    "Lantern",
    "Harbor",
    "Cedar",
    "Silver",
    "Magnolia",
    "North Star",
    "Willow",
    "Red Brick",
    "Juniper",
)
NAME_B = {
    "restaurant": ("Spoon", "Kitchen", "Table", "Bistro", "Cantina", "Grill", "Noodle House", "Tavern"),
    "hotel": ("Inn", "Suites", "Lodge", "Hotel", "House", "Residences"),
    "attraction": ("Museum", "Gardens", "Gallery", "Park", "Hall", "Observatory"),
}
# review sentences: fixture prose, deliberately unlike the generator's phrase grammar
OPENERS = (
    "We stopped by on a Tuesday evening.",
    "Came here twice during our stay in town.",
    "My sister picked this one for her birthday.",
    "Found it by accident while walking around.",
    "First time here after hearing about it from coworkers.",
)
ASPECT_SENTENCES = {
    "restaurant": (
        "The lasagna came out piping hot and the basil smelled amazing.",
        "Honestly the quiet back room made conversation easy.",
        "They have a lovely patio with string lights overhead.",
        "Plenty of vegan plates on the menu, which my partner loved.",
        "Our kids devoured the pancakes at Sunday brunch.",
        "The bartender mixed a smoky cocktail with fresh orange peel.",
        "It felt romantic with candles on every table.",
        "Parking was easy in the lot behind the building.",
        "Prices were reasonable and portions were generous.",
        "The room got loud and lively once the band started.",
    ),
    "hotel": (
        "The pool on the roof was heated and spotless.",
        "Our room was spacious with a separate sitting area.",
        "Breakfast had fresh fruit, waffles and strong coffee.",
        "The shuttle to the airport ran every half hour.",
        "The gym had free weights and two treadmills.",
        "Views of the skyline from the tenth floor were stunning.",
        "Wifi was fast enough for my video calls.",
        "Friendly staff at the desk upgraded us without asking.",
        "It was quiet at night so we slept really well.",
        "Valet parking cost extra but saved us a headache.",
    ),
    "attraction": (
        "The exhibits on river trade were fascinating for the kids.",
        "Our guided tour lasted ninety minutes and flew by.",
        "The trails wind through tall oaks with plenty of shade.",
        "Views over the water at sunset were spectacular.",
        "There's a lot of local history packed into the old halls.",
        "Live music on the lawn made the afternoon feel festive.",
        "It was calm and peaceful early in the morning.",
        "Wheelchair ramps reach every level of the building.",
        "Our dog was welcome on the outdoor paths.",
        "Admission was cheap and the parking lot was free.",
    ),
}
CLOSERS = (
    "Would come back next time we are in the area.",
    "Overall a solid experience for us.",
    "Not perfect, though the visit was worth it.",
    "We left happy and already planning a return.",
    "Service could be a bit faster on busy nights.",
)


def _attributes(rng: random.Random, poi_type: str) -> dict:
    def maybe_bool():
        return rng.choice((True, False, None))

    return {
        "noise_level": rng.choice(("quiet", "average", "loud", "very_loud", None)),
        "wifi": rng.choice(("free", "no", "paid", None)),
        "alcohol": rng.choice(("none", "beer_and_wine", "full_bar", None))
        if poi_type == "restaurant"
        else None,
        "attire": rng.choice(("casual", "dressy", None)),
        **{k: maybe_bool() for k in BOOL_ATTRIBUTES},
        "ambience": sorted(
            rng.sample(("romantic", "intimate", "classy", "trendy", "casual", "hipster"), rng.randint(0, 2))
        ),
        "parking": sorted(rng.sample(("garage", "street", "lot", "valet"), rng.randint(0, 2))),
        "good_for_meal": sorted(
            rng.sample(("brunch", "breakfast", "dinner", "latenight", "dessert"), rng.randint(0, 2))
        )
        if poi_type == "restaurant"
        else [],
        "dietary": sorted(rng.sample(("vegan", "vegetarian", "gluten-free"), rng.randint(0, 2)))
        if poi_type == "restaurant"
        else [],
    }


def write_fixture_kb(
    out: Path,
    cities=("Nashville", "Tampa"),
    types=("restaurant", "hotel", "attraction"),
    per_cell: int = 14,
    reviews_per_poi: int = 5,
    seed: int = 7,
    write_meta: bool = True,
) -> Path:
    """Write a small KB folder; returns its path."""
    rng = random.Random(seed)
    out = Path(out)
    pois, reviews = [], []
    rcount = 0
    for city in cities:
        landmarks = list(CITY_LANDMARKS[city].values())
        for ptype in types:
            for i in range(per_cell):
                bid = f"{city[:3].upper()}{ptype[:3].upper()}{i:03d}".ljust(22, "x")
                lat, lon = rng.choice(landmarks)
                lat += rng.uniform(-0.04, 0.04)
                lon += rng.uniform(-0.04, 0.04)
                review_ids = []
                for _ in range(reviews_per_poi):
                    rcount += 1
                    rid = f"rev{rcount:06d}".ljust(22, "y")
                    sentences = (
                        [rng.choice(OPENERS)]
                        + rng.sample(ASPECT_SENTENCES[ptype], rng.randint(2, 5))
                        + [rng.choice(CLOSERS)]
                    )
                    if rng.random() < 0.2:
                        sentences += rng.sample(ASPECT_SENTENCES[ptype], 4)
                    text = " ".join(sentences)
                    stars = float(rng.randint(2, 5))
                    review_ids.append(rid)
                    reviews.append(
                        {
                            "review_id": rid,
                            "business_id": bid,
                            "stars": stars,
                            "date": f"2019-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} 12:00:00",
                            "text": text,
                        }
                    )
                pois.append(
                    {
                        "business_id": bid,
                        "name": f"{rng.choice(NAME_A)} {rng.choice(NAME_B[ptype])}",
                        "address": f"{rng.randint(10, 999)} Main St",
                        "city": city,
                        "state": "TN" if city == "Nashville" else "FL",
                        "latitude": round(lat, 6),
                        "longitude": round(lon, 6),
                        "categories": [
                            {"restaurant": "Restaurants", "hotel": "Hotels", "attraction": "Active Life"}[
                                ptype
                            ],
                            rng.choice(SUBCATS[ptype]),
                        ],
                        "stars": rng.choice((2.5, 3.0, 3.5, 4.0, 4.0, 4.5, 4.5, 5.0)),
                        "review_count": rng.randint(5, 900),
                        "price": rng.choice((1, 2, 2, 3, 4, None))
                        if ptype != "attraction"
                        else rng.choice((1, 2, None)),
                        "attributes": _attributes(rng, ptype),
                        "poi_type": ptype,
                        "review_ids": review_ids,
                    }
                )
    return write_kb(
        out,
        pois,
        reviews,
        version=FROM_FILES if write_meta else None,
        max_chars=REVIEW_MAX_CHARS,
        source="test-fixture",
    )
